/**
 * The compiled prompt and its parts, each made into a JavaScript value when first read, so a
 * request pays only for the parts it reads.
 *
 * N-API runs a result's finalizer only when the event loop turns: results compiled one after
 * another in synchronous code all stay alive until then. Their large parts are therefore
 * shared with other results wherever they are the same ([`Runtime::compile_shared`]), and
 * `index.js` keeps the JavaScript value made from each part by its number (`…Part`), giving
 * each result a copy.
 */
export declare class CompileResult {
  get family(): string
  get variant(): string
  get version(): string | null
  /** The final system prompt. */
  get prompt(): string
  /** The number of the prompt's part: the same for results with the same prompt. */
  get promptPart(): number
  /** The number of the sections' part. */
  get sectionsPart(): number
  /** The number of the tools' part. */
  get toolsPart(): number
  /** The number of the inputs' part. */
  get inputsPart(): number
  /** The number of the tool definitions' part, for variants with native tools. */
  get toolDefinitionsPart(): number | null
  /** The sections, as JSON text (see `tool_definitions_json`). */
  get sectionsJson(): string
  /** The tools the prompt documents, in order, as JSON text (see `tool_definitions_json`). */
  get toolsJson(): string
  /** Model settings the variant carries (temperature, …), keys as written. */
  get model(): Record<string, unknown>
  /** Workspace files the prompt was compiled from. */
  get inputs(): Array<string>
  /** The provider shape of `toolDefinitions`, for variants with native tools. */
  get dialect(): string | null
  /**
   * Native tool definitions, ready for the provider's API, for variants with native tools,
   * as JSON text. `index.js` parses the `…_json` texts into `toolDefinitions`, `sections`
   * and `tools`: V8 parses JSON far faster than objects are built one call at a time.
   */
  get toolDefinitionsJson(): string | null
  /** Warnings met on the way (a rules file left out, say). */
  get warnings(): Array<Diagnostic>
}

/** A workspace of variants, components and tools, loaded and validated once. */
export declare class Workspace {
  /**
   * Loads the workspace in `dir` (the folder of its promptc.toml). Throws with every
   * problem found, located.
   */
  static load(dir: string): Workspace
  /**
   * Reads the workspace's files again. On failure it throws, and the workspace keeps
   * compiling as it was loaded before.
   */
  reload(): void
  /** The folder the workspace was loaded from, made absolute. */
  get root(): string
  /** Warnings found while loading. */
  get warnings(): Array<Diagnostic>
  /** The system prompt and native tool definitions for one request. */
  compile(requestJson?: string): CompileResult
  /**
   * The median time, in microseconds, of `runs` compiles of `request` by the Rust library
   * alone in this process, with nothing converted: the baseline `bench/compile.mjs` sets
   * the package's own figures against. Not part of the API.
   */
  _benchLibraryCompile(requestJson: string | undefined, runs: number): number
  /**
   * `compile` on a worker thread: many requests compile at once without blocking the
   * event loop.
   */
  compileAsync(requestJson?: string): Promise<CompileResult>
  /** Why each component and tool is in the prompt or not (`promptc explain --format json`). */
  explain(requestJson?: string): Record<string, any>
  /**
   * Tokens, characters, budget and stable prefix of the request's prompt, per section too
   * (`promptc stats --format json`).
   */
  stats(requestJson?: string): Record<string, any>
  /**
   * The family, version and variant that serve the request's model, and the rule that
   * chose them (`promptc route --format json`).
   */
  route(requestJson?: string): Record<string, any>
  /** The families with their versions, labels, tags and routing rules (`promptc list --format json`). */
  families(): Array<Record<string, any>>
}

/**
 * What `compile` takes. The object itself is read by promptc, which refuses unknown keys:
 * this declares its TypeScript type.
 */
export interface CompileRequest {
  /**
   * The model in hand: routing picks the family for it, and it becomes the context's
   * `model`.
   */
  model?: Model
  /**
   * The context's fields as in a context file (`cwd`, `mode`, `mcp_servers`, `date`, …;
   * keys as in the schema), or the name of one of the workspace's contexts. Its
   * `rules_from` folders are the caller's and may lie anywhere.
   */
  context?: Record<string, unknown> | string
  /** Compile this family instead of the routed one. */
  family?: string
  /** Compile this variant (an id or `family@version`) instead of the routed one; given alone, without `family`, `label` or `tag`. */
  variant?: string
  /** Within the family, the version this label names. */
  label?: string
  /** Within the family, only variants carrying this tag. */
  tag?: string
  /** The provider shape of native tool definitions (`openai`, `openai-responses`, `anthropic`, `gemini`); for a variant without native tools, a `dialect-unused` warning. */
  dialect?: string
  /** Runtime placeholders that win over every other value. */
  set?: Record<string, string>
  /** What a prompt over its variant's token budget is: a failure (`error`, the default), or the prompt with an `over-budget` warning (`warn`). */
  over_budget?: 'error' | 'warn'
}

/**
 * A problem, where it is and what would fix it. `file`, `line` and `column` are absent for
 * a problem of the request itself.
 */
export interface Diagnostic {
  /** `error` or `warning`. */
  severity: string
  code: string
  message: string
  help?: string
  file?: string
  line?: number
  column?: number
  endLine?: number
  endColumn?: number
  notes: Array<string>
  /**
   * For a `more-problems` diagnostic: how many problems past the first 1,000 of a run
   * (or a file's first 100) it stands for, which have no diagnostic of their own.
   */
  notShown?: NotShown
}

/** A model as its provider names it. */
export interface Model {
  id?: string
  provider?: string
}

/** The errors and warnings a `more-problems` diagnostic counts. */
export interface NotShown {
  errors: number
  warnings: number
}

export interface Parameter {
  name: string
  required: boolean
  type: string
  instruction: string
  usage: string
  note: string
  /** JSON Schema keywords of the parameter, keys as written. */
  schema?: Record<string, unknown>
}

/** One section of the prompt: a component's output, or why it is empty. */
export interface Section {
  id: string
  slot: string
  included: boolean
  reason?: string
  template?: string
  source?: SourceRange
  text: string
}

/** Lines of a workspace file. */
export interface SourceRange {
  file: string
  firstLine: number
  lastLine: number
}

/** A tool the prompt documents. */
export interface Tool {
  id: string
  name: string
  spec: string
  source: SourceRange
  description: string
  parameters: Array<Parameter>
  /** For a tool made per item of runtime data, the item's index. */
  item?: number
}

/** The version of promptc this package carries. */
export declare function version(): string
