// Type-checked by types.test.mjs (tsc --noEmit): the declarations describe the API as used.
import { PromptcError, Workspace, version } from '..'
import type { CompileResult, Diagnostic } from '..'

const workspace: Workspace = Workspace.load('.')
const result: CompileResult = workspace.compile({
  model: { id: 'claude-sonnet-4-5', provider: 'anthropic' },
  context: { cwd: '/srv/app', mode: 'act', rules_from: ['/srv/app'] },
})
const prompt: string = result.prompt
const firstLine: number | undefined = result.sections[0]?.source?.firstLine
const definitions: Array<Record<string, unknown>> | undefined = result.toolDefinitions
const pending: Promise<CompileResult> = workspace.compileAsync({ family: 'xs', context: 'basic' })

try {
  workspace.reload()
} catch (error) {
  if (error instanceof PromptcError) {
    const first: Diagnostic | undefined = error.diagnostics[0]
    const where: string = `${first?.file}:${first?.line}:${first?.column}`
    console.log(where)
  }
}

// @ts-expect-error: a request has no `familly`.
workspace.compile({ familly: 'gpt' })
// @ts-expect-error: the native result's part numbers are not fields of a result.
result.promptPart
// @ts-expect-error: nor are its JSON texts.
result.toolDefinitionsJson
// @ts-expect-error: the prompt is a string.
const wrong: number = result.prompt

console.log(prompt, firstLine, definitions, pending, version, wrong)
