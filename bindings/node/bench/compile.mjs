// Per-request latency through the Node package, for the requests the Rust bench
// (`cargo bench --bench runtime`) times with the library itself. Build the package with
// `npm run build:release` first: a debug build measures the debug build.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { Workspace } = require(process.env.PROMPTC_NODE_PACKAGE ?? '..')
const repo = fileURLToPath(new URL('../../../', import.meta.url))
const requests = JSON.parse(readFileSync(new URL('../../bench/requests.json', import.meta.url), 'utf8'))

const workspace = Workspace.load(repo)
const runs = 2000
console.log(`Node package compile, shipped library, warm (${runs} compiles each):`)
// What an agent reads of each result: the prompt and the tool definitions; and, apart, every
// field.
const reads = {
  'prompt, tool definitions': (r) => [r.family, r.prompt, r.toolDefinitions],
  'every field': (r) => [r.family, r.prompt, r.sections, r.tools, r.model, r.inputs, r.toolDefinitions, r.warnings],
}
for (const [read, use] of Object.entries(reads)) {
  console.log(` reading ${read}:`)
  for (const [name, request] of Object.entries(requests)) {
    for (let i = 0; i < runs / 10; i++) use(workspace.compile(request))
    const samples = []
    for (let i = 0; i < runs; i++) {
      const start = process.hrtime.bigint()
      use(workspace.compile(request))
      samples.push(Number(process.hrtime.bigint() - start) / 1000)
    }
    samples.sort((a, b) => a - b)
    const at = (p) => samples[Math.min(samples.length - 1, Math.floor((samples.length * p) / 100))]
    // The library's own compile, in this process, just after: the same machine state.
    const library = workspace._benchLibraryCompile(request, runs)
    console.log(
      `  ${name.padEnd(28)} median ${at(50).toFixed(0)} µs  p99 ${at(99).toFixed(0)} µs` +
        `  library alone ${library.toFixed(0)} µs  ratio ${(at(50) / library).toFixed(2)}`,
    )
  }
}
