// The parts of the server's JSON that the extension reads. The server owns
// the shape (docs/json-contract.md); keys are only ever added, so every field
// here is optional and read defensively.

export interface Fix {
  title?: string;
  /** "env", "edit", "command" or "advice" (new kinds may be added). */
  kind?: string;
  /** "safe", "unsafe" or "display-only". */
  safety?: string;
  env?: { name?: string; value?: string };
  command?: string;
  detail?: string;
}

export interface Numbers {
  requested_bytes?: number;
  total_bytes?: number;
  free_bytes?: number;
  allocated_bytes?: number;
  reserved_bytes?: number;
  reserved_unallocated_bytes?: number;
  private_pools_bytes?: number;
  process_in_use_bytes?: number;
  non_pytorch_bytes?: number;
  limit_bytes?: number;
  other_processes?: { pid?: number; bytes?: number }[];
}

/** One part of the memory breakdown, in bar order. */
export interface BreakdownPart {
  /** "allocated", "reserved_unallocated", "non_pytorch", "other_processes", "unaccounted" or "free" (more may be added). */
  kind?: string;
  label?: string;
  bytes?: number;
}

/** Where the device's memory was at the failure, as the server computed it (oomlens.diagnoseText results). */
export interface Breakdown {
  /** The bar's whole: the device total, else the sum of the parts. */
  total_bytes?: number;
  total_is_device?: boolean;
  parts?: BreakdownPart[];
}

export interface Incident {
  file?: string;
  class?: string;
  rule?: string;
  name?: string;
  severity?: string;
  message?: string;
  line?: number;
  end_line?: number;
  device?: string;
  framework?: string;
  gpu?: number;
  exception?: string;
  text?: string;
  numbers?: Numbers;
  /** Absent in `diagnose --format json`; null when the figures are too few to draw. */
  breakdown?: Breakdown | null;
  ranks?: { first_failing?: number | null; oom?: number[]; collateral?: number[] };
  location?: { file?: string; line?: number; function?: string } | null;
  arithmetic?: string[];
  notes?: string[];
  fixes?: Fix[];
  verify?: string;
  explanation?: string;
}

export interface Finding {
  file?: string;
  line?: number;
  rank?: number | null;
  rule?: string;
  name?: string;
  severity?: string;
  kind?: string;
  message?: string;
  text?: string;
}

export interface Report {
  version?: string;
  incidents?: Incident[];
  findings?: Finding[];
}

/** What `oomlens.diagnoseText` answers. */
export interface DiagnoseResult {
  json?: Report;
  markdown?: string;
}

/** What `oomlens.analyzeSnapshot` (a file or a folder of ranks) and `oomlens.compareSnapshots` answer. */
export interface SnapshotResult {
  json?: unknown;
  markdown?: string;
  html?: string;
}

/** The fix argument of `oomlens.fixScript`. */
export type ScriptFix =
  | { kind: "env"; name: string; value: string }
  | { kind: "snapshot"; line?: number }
  | { kind: "empty_cache" };

