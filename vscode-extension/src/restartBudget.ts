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
