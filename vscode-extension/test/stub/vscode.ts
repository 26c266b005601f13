// A small stand-in for the `vscode` module: enough of the API for the unit
// tests, and a record of what the extension registered.

export const registered = new Map<string, (...args: unknown[]) => unknown>();

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (registered.has(id)) throw new Error(`command '${id}' already exists`);
    registered.set(id, fn);
    return new Disposable(() => registered.delete(id));
  },
  executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    const fn = registered.get(id);
    return fn ? Promise.resolve(fn(...args)) : Promise.reject(new Error(`command '${id}' not found`));
  },
};

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startChar: number, endLine: number, endChar: number) {
    this.start = new Position(startLine, startChar);
    this.end = new Position(endLine, endChar);
  }
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export class Diagnostic {
  source?: string;
  code?: string | number;
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export const window = {
  terminals: [] as unknown[],
  activeTerminal: undefined,
  activeTextEditor: undefined,
};

export const workspace = {
  getConfiguration: () => ({ get: <T>(_key: string, fallback?: T) => fallback }),
};
