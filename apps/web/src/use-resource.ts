import { useCallback, useEffect, useState } from 'preact/hooks';

export type Resource<T> =
  | { status: 'loading'; previous: T | null }
  | { status: 'ok'; data: T }
  | { status: 'error'; error: unknown };

/** Loads `load` whenever `key` changes; aborts the stale request; `retry` loads again. */
export function useResource<T>(
  key: string,
  load: (signal: AbortSignal) => Promise<T>,
): [Resource<T>, () => void] {
  const [state, setState] = useState<Resource<T>>({ status: 'loading', previous: null });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ status: 'loading', previous: s.status === 'ok' ? s.data : null }));
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ status: 'ok', data });
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState({ status: 'error', error });
      },
    );
    return () => controller.abort();
  }, [key, attempt]);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return [state, retry];
}
