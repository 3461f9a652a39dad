// The package's API: the native module's, generated into native.d.ts from the Rust
// declarations, with errors as `PromptcError`.
import type {
  CompileRequest,
  CompileResult as NativeCompileResult,
  Diagnostic,
  Section,
  Tool,
} from './native'

export type { CompileRequest, Diagnostic, Model, NotShown, Parameter, Section, SourceRange, Tool } from './native'

/** The compiled prompt and its parts: a plain object, each part made when first read. */
export type CompileResult = Omit<
  NativeCompileResult,
  | 'sectionsJson'
  | 'toolsJson'
  | 'toolDefinitionsJson'
  | 'promptPart'
  | 'sectionsPart'
  | 'toolsPart'
  | 'inputsPart'
  | 'toolDefinitionsPart'
> & {
  sections: Array<Section>
  /** The tools the prompt documents, in order. */
  tools: Array<Tool>
  /** Native tool definitions, ready for the provider's API, for variants with native tools. */
  toolDefinitions?: Array<Record<string, unknown>>
}

/** What every failing call throws: the first error in `message`, all of them in `diagnostics`. */
export declare class PromptcError extends Error {
  readonly diagnostics: Array<Diagnostic>
}

/** A workspace of variants, components and tools, loaded and validated once. */
export declare class Workspace {
  private constructor()
  static load(dir: string): Workspace
  reload(): void
  get root(): string
  get warnings(): Array<Diagnostic>
  compile(request?: CompileRequest): CompileResult
  compileAsync(request?: CompileRequest): Promise<CompileResult>
  explain(request?: CompileRequest): Record<string, any>
  stats(request?: CompileRequest): Record<string, any>
  route(request?: CompileRequest): Record<string, any>
  families(): Array<Record<string, any>>
}

/** The version of promptc this package carries. */
export declare const version: string
