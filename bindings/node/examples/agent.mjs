// An agent's request loop, in short: load the prompt library once, then for each request
// compile the system prompt and tool definitions for the model in hand and the user's
// project. No network: where a real agent would call its model, this prints what it would
// send. Run it with `node examples/agent.mjs` after `npm run build`.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
// In your own project: require('promptc-runtime').
const { Workspace, PromptcError } = require('..')

const library = fileURLToPath(new URL('../../../', import.meta.url))
const project = fileURLToPath(new URL('../../../examples/agent-project/', import.meta.url))

const workspace = Workspace.load(library)

const requests = [
  { id: 'claude-sonnet-4-5', provider: 'anthropic' },
  { id: 'gpt-4.1', provider: 'openai' },
]

for (const model of requests) {
  try {
    const result = workspace.compile({
      model,
      context: {
        cwd: project,
        os: process.platform,
        date: '2026-11-22',
        mode: 'act',
        rules_from: [project],
      },
    })
    console.log(`## ${model.id}: family ${result.family} ${result.version ?? ''}`)
    console.log(result.prompt.split('\n').slice(0, 3).join('\n'))
    console.log(`tools: ${result.tools.map((tool) => tool.name).join(', ')}`)
    const rules = result.sections.find((section) => section.id === 'user_instructions')
    console.log(`project rules in the prompt: ${rules?.included ? 'yes' : 'no'}`)
  } catch (error) {
    if (!(error instanceof PromptcError)) throw error
    for (const d of error.diagnostics) {
      console.error(`${d.file ?? '<request>'}:${d.line ?? 0}:${d.column ?? 0}: ${d.message}`)
    }
    process.exitCode = 1
  }
}
