/**
 * An EventSource for a dashboard stream that tells its controller whether it is connected
 * (`open` → live, `error` → reconnecting; the browser retries on its own) and re-renders the
 * host on each change. The caller adds its own event listeners.
 */
import type { ReactiveControllerHost } from 'lit';

export function liveSource(url: string, host: ReactiveControllerHost, setLive: (live: boolean) => void): EventSource {
  const s = new EventSource(url);
  for (const [type, live] of [['open', true], ['error', false]] as const) {
    s.addEventListener(type, () => {
      setLive(live);
      host.requestUpdate();
    });
  }
  return s;
}
