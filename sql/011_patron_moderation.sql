-- Patron moderation (docs/design.md#8): the operator hides a Verified Patron (a name: all of its
-- payments) and restores it. The actions share the moderation audit log, so the console keeps one
-- list of everything done; their rows name the patron and no bid.
ALTER TABLE auction_moderation_log DROP CONSTRAINT auction_moderation_log_action;
ALTER TABLE auction_moderation_log ADD CONSTRAINT auction_moderation_log_action
  CHECK (action IN ('hide', 'restore', 'block', 'unblock', 'hide_patron', 'restore_patron'));
