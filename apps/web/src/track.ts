// registry-api.md: the web UI tracks a copy or download of SKILL.md once per page visit. A visit is one
// mount of the package page (reload or navigating back mounts it again). Tracking is fire and forget: a
// failure never blocks the copy or the download, and the flag is spent either way.

export function createVisitTracker(send: () => Promise<unknown>): () => void {
  let sent = false;
  return () => {
    if (sent) return;
    sent = true;
    try {
      send().catch(() => {});
    } catch {
      // A synchronous throw from send is as harmless as a rejected promise.
    }
  };
}
