// The package's API: the native module's, generated into native.d.ts from the Rust
// declarations, with errors as `PromptcError`.
import type { CompileRequest, CompileResult, Diagnostic, Workspace as NativeWorkspace } from './native'

export type { CompileRequest, CompileResult, Diagnostic, Model, Parameter, Section, SourceRange, Tool } from './native'

/** What every failing call throws: the first error in `message`, all of them in `diagnostics`. */
export declare class PromptcError extends Error {
  readonly diagnostics: Array<Diagnostic>
}

/** A workspace of variants, components and tools, loaded and validated once. */
export declare class Workspace implements Omit<NativeWorkspace, never> {
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
