import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
  /** Replaces the data in place (after a mutation answered with the new state). */
  set: (data: T) => void;
}

/** Loads `load()` whenever `deps` change; a slower earlier answer never overwrites a newer one. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [version, setVersion] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => {
        if (ticket === latest.current) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (ticket === latest.current)
          setState({ error: error instanceof Error ? error : new Error(String(error)), loading: false });
      },
    );
    // Callers pass the inputs of `load` as deps; `load` itself is a fresh closure on every render.
  }, [...deps, version]);

  const reload = useCallback(() => setVersion((v) => v + 1), []);
  const set = useCallback((data: T) => setState({ data, loading: false }), []);
  return { data: state.data, error: state.error, loading: state.loading, reload, set };
}

/** `value`, once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Sets the document title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Warmup` : 'Warmup';
  }, [title]);
}

/**
 * A form's submission: `busy` while `work` runs, and its failure kept to show in place (cleared when
 * it is tried again). `submit` takes the form's event and stops the browser's own submission.
 */
export function useSubmit(work: () => Promise<void>): {
  busy: boolean;
  error: unknown;
  submit: (event?: Event) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function submit(event?: Event) {
    event?.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, submit };
}
