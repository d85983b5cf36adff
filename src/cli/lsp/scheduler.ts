// When the editor server analyzes a document as it is typed. Each change restarts a short
// wait (`debounceMs`); a change that arrives while the document's analysis is running does
// not start a second one beside it: the running one finishes, its result is dropped as stale,
// and one analysis of the newest text follows. So a burst of keystrokes costs at most one
// analysis in flight and one waiting, and what is published is always for the newest text.

export interface Snapshot {
  uri: string;
  version: number;
  text: string;
}

export interface SchedulerHooks<R> {
  /** The document as it is now; undefined once it was closed. */
  current(uri: string): Snapshot | undefined;
  analyze(snapshot: Snapshot): Promise<R>;
  /** Called only with the result for the document's current version. */
  publish(snapshot: Snapshot, result: R): void;
}

interface DocState {
  timer?: ReturnType<typeof setTimeout>;
  running: boolean;
  /** A change arrived while running: analyze again once it ends. */
  again: boolean;
}

export class AnalysisScheduler<R> {
  private readonly docs = new Map<string, DocState>();

  constructor(
    private readonly hooks: SchedulerHooks<R>,
    private readonly debounceMs: number,
  ) {}

  /** The document changed (or was opened): analyze it after the wait. */
  changed(uri: string): void {
    const state = this.state(uri);
    if (state.timer) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      void this.run(uri, state);
    }, this.debounceMs);
  }

  /** The document was closed: nothing more is analyzed or published for it. */
  closed(uri: string): void {
    const state = this.docs.get(uri);
    if (state?.timer) clearTimeout(state.timer);
    this.docs.delete(uri);
  }

  /** Every open document again (a settings file changed). */
  all(uris: Iterable<string>): void {
    for (const uri of uris) this.changed(uri);
  }

  private state(uri: string): DocState {
    let state = this.docs.get(uri);
    if (!state) this.docs.set(uri, (state = { running: false, again: false }));
    return state;
  }

  private async run(uri: string, state: DocState): Promise<void> {
    if (state.running) {
      state.again = true;
      return;
    }
    const snapshot = this.hooks.current(uri);
    if (!snapshot) return;
    state.running = true;
    try {
      const result = await this.hooks.analyze(snapshot);
      const now = this.hooks.current(uri);
      if (this.docs.get(uri) === state && now?.version === snapshot.version) this.hooks.publish(snapshot, result);
    } finally {
      state.running = false;
    }
    if (state.again && this.docs.get(uri) === state) {
      state.again = false;
      await this.run(uri, state);
    }
  }
}
