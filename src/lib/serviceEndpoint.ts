/**
 * A service route's URL from the socket's (config.realtimeUrl): the route sits beside /realtime on
 * the same service, over http(s). ws://host:port/realtime with /auction/winners gives
 * http://host:port/auction/winners, wss gives https, and a proxy's path prefix is kept
 * (wss://x/live/realtime: https://x/live/auction/winners). Empty (the socket on the page's own
 * origin): the same-origin path.
 */
export function serviceEndpoint(realtimeUrl: string, path: string): string {
  if (!realtimeUrl) return path;
  // Relative, so it replaces the socket's last path segment and drops any query.
  const url = new URL(path.slice(1), realtimeUrl);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  return url.href;
}
