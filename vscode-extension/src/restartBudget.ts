// Bounded restarts of a crashing server (VS Code's own limit is 5 in 3 minutes,
// with a message that does not say what to do: ruff-vscode#131).

/** At most `limit` restarts in `windowMs`; after that the server stays down until "Restart Server". */
export class RestartBudget {
  private times: number[] = [];
  constructor(
    readonly limit = 3,
    readonly windowMs = 3 * 60 * 1000,
  ) {}
  allow(now = Date.now()): boolean {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    if (this.times.length >= this.limit) return false;
    this.times.push(now);
    return true;
  }
  reset(): void {
    this.times = [];
  }
}

// vscode-languageclient's ErrorAction / CloseAction values (kept here so this
// file needs neither vscode nor the client, and is unit-tested on its own).
export const ErrorAction = { Continue: 1, Shutdown: 2 } as const;
export const CloseAction = { DoNotRestart: 1, Restart: 2 } as const;

export interface BoundedErrorHandlerOptions {
  budget: RestartBudget;
  binary: string;
  log(line: string): void;
  onGaveUp(message: string): void;
}

/** The client's error handler: restart a stopped server within the budget, then stop with a message that names the setting. */
export function boundedErrorHandler(o: BoundedErrorHandlerOptions) {
  return {
    // A few bad messages are survivable; a stream of them means a broken pipe.
    error: (_error: unknown, _message: unknown, count: number | undefined) => ({
      action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
      handled: true,
    }),
    closed: () => {
      if (o.budget.allow()) {
        o.log(`[oomlens] the server (${o.binary}) stopped; restarting it.`);
        return { action: CloseAction.Restart, handled: true };
      }
      const message = `The oomlens server (${o.binary}) stopped ${o.budget.limit + 1} times in ${Math.round(
        o.budget.windowMs / 60000,
      )} minutes and will not be restarted. See the oomlens output; check the "oomlens.path" setting, then run "oomlens: Restart Server".`;
      o.log(`[oomlens] ${message}`);
      o.onGaveUp(message);
      return { action: CloseAction.DoNotRestart, handled: true };
    },
  };
}

/**
 * `promise`, or a rejection with `message` once `ms` pass first. A server that
 * dies at once can leave the client's start pending (the close raced the
 * initialize request): the user is then told, instead of seeing nothing.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
