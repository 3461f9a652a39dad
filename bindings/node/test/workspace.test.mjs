// The package as an agent uses it: node --test (see package.json).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Workspace, PromptcError, version } = require('..')

const repo = fileURLToPath(new URL('../../../', import.meta.url))
const shipped = Workspace.load(repo)
const families = ['generic', 'next-gen', 'native-next-gen', 'xs', 'gpt', 'gemini']

/** A copy of the shipped library in a temporary folder, removed after the test. */
function copyOfShipped(t) {
  const dir = mkdtempSync(join(tmpdir(), 'promptc-node-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  for (const part of ['promptc.toml', 'variants', 'components', 'partials', 'tools', 'examples/contexts']) {
    cpSync(join(repo, part), join(dir, part), { recursive: true })
  }
  return dir
}

function thrown(call) {
  try {
    call()
  } catch (error) {
    assert.ok(error instanceof PromptcError, `a PromptcError, not ${error}`)
    assert.ok(error instanceof Error)
    return error
  }
  assert.fail('the call should throw')
}

test('a prompt over its budget throws, or comes with a warning when asked', (t) => {
  const dir = copyOfShipped(t)
  const xs = join(dir, 'variants/xs.toml')
  writeFileSync(xs, readFileSync(xs, 'utf8').replace('max_prompt_tokens = 2000', 'max_prompt_tokens = 50'))
  const workspace = Workspace.load(dir)
  const error = thrown(() => workspace.compile({ family: 'xs', context: 'basic' }))
  assert.ok(error.diagnostics.some((d) => d.code === 'over-budget' && d.severity === 'error'))
  const result = workspace.compile({ family: 'xs', context: 'basic', over_budget: 'warn' })
  assert.ok(result.prompt.length > 0)
  const over = result.warnings.filter((w) => w.code === 'over-budget')
  assert.equal(over.length, 1)
  assert.equal(over[0].severity, 'warning')
})

test('each shipped family compiles to its committed prompt', () => {
  for (const family of families) {
    const result = shipped.compile({ family, context: 'basic' })
    const committed = readFileSync(join(repo, `examples/prompts/${family}/basic.md`), 'utf8')
    assert.equal(result.family, family)
    assert.equal(result.prompt, committed, family)
    assert.ok(result.sections.length > 0)
    assert.ok(result.tools.every((tool) => typeof tool.source.firstLine === 'number'))
    assert.deepEqual(result.warnings, [])
  }
})

test('a result is a plain object: every field enumerable, each part kept once read', () => {
  const result = shipped.compile({ family: 'native-next-gen', context: 'basic' })
  assert.equal(result.sections, result.sections)
  const copy = JSON.parse(JSON.stringify(result))
  assert.deepEqual(Object.keys(copy).sort(), [
    'dialect', 'family', 'inputs', 'model', 'prompt', 'sections', 'toolDefinitions', 'tools',
    'variant', 'version', 'warnings',
  ])
  assert.equal(copy.prompt, result.prompt)
  assert.deepEqual(copy.toolDefinitions, result.toolDefinitions)
  assert.deepEqual({ ...result }.tools, result.tools)
})

test('a model id routes to its family', () => {
  const routed = (id, provider) =>
    shipped.compile({ model: { id, provider }, context: { cwd: '/srv/app', date: '2026-11-22' } })
  assert.equal(routed('claude-sonnet-4-5', 'anthropic').family, 'next-gen')
  assert.equal(routed('claude-3-7-sonnet-20250219', 'anthropic').family, 'generic')
  assert.equal(routed('gemini-1.5-pro', 'gemini').family, 'gemini')
  const result = routed('gpt-5', 'openai')
  assert.equal(result.family, 'next-gen')
  assert.equal(result.version, '1.0.0')
  assert.equal(shipped.route({ model: { id: 'gpt-4.1' } }).family, 'gpt')
})

test('native tool definitions keep the provider API keys', () => {
  const result = shipped.compile({
    family: 'native-next-gen',
    model: { id: 'claude-sonnet-4-5', provider: 'anthropic' },
    context: 'basic',
  })
  assert.equal(result.dialect, 'anthropic')
  const first = result.toolDefinitions[0]
  // Data keeps its own keys: the provider expects `input_schema`, and parameter names as written.
  assert.ok(first.input_schema, JSON.stringify(first))
  // The documented tools, then one per tool of the context's connected MCP servers.
  const names = result.toolDefinitions.map((tool) => tool.name)
  const documented = result.tools.map((tool) => tool.name)
  assert.deepEqual(names.slice(0, documented.length), documented)
  assert.ok(names.includes('github__create_issue'), names.join(' '))
  const openai = shipped.compile({ family: 'native-next-gen', context: 'basic', dialect: 'openai' })
  assert.equal(openai.dialect, 'openai')
  assert.notDeepEqual(openai.toolDefinitions, result.toolDefinitions)
})

test('results that share a compile\'s parts are each the caller\'s own', () => {
  // A request whose MCP tool schema lists its fields in a given order, with a `__proto__` field.
  const request = (order) => ({
    family: 'native-next-gen',
    model: { id: 'claude-sonnet-4-5', provider: 'anthropic' },
    context: {
      cwd: '/srv/app',
      date: '2026-11-22',
      mcp_servers: [
        {
          name: 'notes',
          tools: [
            {
              name: 'add_note',
              description: 'Store a note.',
              input_schema: {
                type: 'object',
                properties: Object.fromEntries(
                  [...order, '__proto__'].map((field) => [field, { type: 'string' }]),
                ),
              },
            },
          ],
        },
      ],
    },
  })
  const mcpSchema = (result) =>
    result.toolDefinitions.find((tool) => tool.name === 'notes__add_note').input_schema
  const first = shipped.compile(request(['zeta', 'alpha']))
  const second = shipped.compile(request(['zeta', 'alpha']))
  // Changing one result's parts changes no other result's.
  const pristine = JSON.stringify([second.toolDefinitions, second.sections, second.tools, second.inputs])
  first.toolDefinitions[0].name = 'changed'
  first.sections.pop()
  first.tools[0].parameters.length = 0
  first.inputs.push('changed')
  const third = shipped.compile(request(['zeta', 'alpha']))
  for (const result of [second, third]) {
    assert.equal(
      JSON.stringify([result.toolDefinitions, result.sections, result.tools, result.inputs]),
      pristine,
    )
  }
  // Each result's data keeps the order its request gave, even after an equal one in another
  // order; `__proto__` stays a field, as JSON.parse makes it.
  assert.deepEqual(Object.keys(mcpSchema(third).properties), ['zeta', 'alpha', '__proto__'])
  const reordered = shipped.compile(request(['alpha', 'zeta']))
  assert.deepEqual(Object.keys(mcpSchema(reordered).properties), ['alpha', 'zeta', '__proto__'])
  assert.equal(Object.getPrototypeOf(mcpSchema(reordered).properties), Object.prototype)
  assert.deepEqual(Object.keys(mcpSchema(shipped.compile(request(['zeta', 'alpha']))).properties), [
    'zeta',
    'alpha',
    '__proto__',
  ])
})

test('a bad workspace throws with located diagnostics', (t) => {
  const dir = copyOfShipped(t)
  writeFileSync(join(dir, 'tools/read_file.toml'), 'id = "read_file"\nbogus = 1\n')
  const error = thrown(() => Workspace.load(dir))
  const first = error.diagnostics.find((d) => d.severity === 'error')
  assert.equal(first.file, 'tools/read_file.toml')
  assert.equal(typeof first.line, 'number')
  assert.equal(typeof first.column, 'number')
  assert.ok(first.code.length > 0)
  assert.match(error.message, /^tools\/read_file\.toml:\d+:\d+: /)
  assert.equal(thrown(() => Workspace.load(tmpdir())).diagnostics[0].code, 'not-a-workspace')
})

test('problems past the first 1,000 are counted in one more-problems diagnostic', (t) => {
  const dir = copyOfShipped(t)
  for (let file = 0; file < 11; file++) {
    const keys = Array.from({ length: 100 }, (_, key) => `bogus_${key} = ${key}\n`).join('')
    writeFileSync(join(dir, `tools/extra_${file}.toml`), `id = "extra_${file}"\ndescription = "x"\n${keys}`)
  }
  const error = thrown(() => Workspace.load(dir))
  const shown = error.diagnostics.filter((d) => d.notShown === undefined)
  const more = error.diagnostics.filter((d) => d.notShown !== undefined)
  assert.equal(shown.length, 1000)
  assert.ok(shown.every((d) => d.code === 'unknown-key'))
  assert.equal(more.length, 1)
  assert.equal(more[0].code, 'more-problems')
  assert.deepEqual(more[0].notShown, { errors: 100, warnings: 0 })
  assert.match(error.message, /\(and 1099 more errors\)$/)
})

test('a bad context value throws, located in the context as given', () => {
  const error = thrown(() => shipped.compile({ context: { cwd: '/srv/app', mode: 'fly' } }))
  const [first] = error.diagnostics
  assert.equal(first.code, 'invalid-value')
  assert.equal(first.file, '<context>')
  assert.equal(first.line, 3)
  assert.match(first.message, /fly/)
  assert.equal(thrown(() => shipped.compile({ familly: 'gpt' })).diagnostics[0].code, 'invalid-request')
  assert.equal(thrown(() => shipped.compile({ context: 'nope' })).diagnostics[0].code, 'unknown-context')
})

test('a request that JSON cannot carry as written is refused at its place, not changed', () => {
  const refused = (request) => {
    const error = thrown(() => shipped.compile(request))
    assert.equal(error.diagnostics.length, 1, JSON.stringify(error.diagnostics))
    assert.equal(error.diagnostics[0].code, 'invalid-request')
    return error.diagnostics[0]
  }
  const context = { cwd: '/srv/app', date: '2026-11-22' }
  for (const [request, message] of [
    [{ family: 'xs', context: 'basic', set: { LIMIT: 10n } }, '`set.LIMIT` is a value of kind `bigint`'],
    [{ family: 'xs', context: 'basic', set: { LIMIT: Number.NaN } }, '`set.LIMIT` is `NaN`, a number'],
    [{ family: 'xs', context: 'basic', set: { LIMIT: -Infinity } }, '`set.LIMIT` is `-Infinity`, a number'],
    [{ family: 'xs', context: { ...context, mcp_servers: [{ name: 'x', tools: Symbol('t') }] } }, '`context.mcp_servers[0].tools` is a value of kind `symbol`'],
    [{ family: 'xs', context: { ...context, extra: { 'a b': [1, () => 2] } } }, '`context.extra["a b"][1]` is a value of kind `function`'],
  ]) {
    const diagnostic = refused(request)
    assert.ok(diagnostic.message.startsWith(`invalid request: ${message}`), diagnostic.message)
    assert.match(diagnostic.help, /^a request holds data only/)
  }
  // A request that is a function is no request at all.
  assert.equal(refused(() => ({ family: 'xs' })).message, 'invalid request: the request is a value of kind `function`, which is not data a request can carry')
  // Nested past what a request may hold, or holding itself: refused at its place, never a
  // crash, whether JSON.stringify could write it or not.
  const nest = (levels) => {
    let deep = { type: 'string' }
    for (let i = 0; i < levels; i++) deep = { type: 'object', properties: { a: deep } }
    return deep
  }
  const looped = { type: 'object' }
  looped.properties = { self: looped }
  for (const schema of [nest(61), nest(100_000), looped]) {
    const server = { name: 'notes', tools: [{ name: 'add', input_schema: schema }] }
    const diagnostic = refused({ family: 'xs', context: { ...context, mcp_servers: [server] } })
    assert.match(diagnostic.message, /^invalid request: `context\.mcp_servers\[0\]\.tools\[0\]\.input_schema\.properties\.[a-z]+…` nests lists and tables 128 levels deep/)
    assert.match(diagnostic.help, /^a request nests fewer than 128 levels: flatten or shorten `context\.mcp_servers\[0\]\.tools\[0\]/)
  }
  // A schema as deep as real ones compiles.
  const server = { name: 'notes', tools: [{ name: 'add', description: 'Add.', input_schema: nest(10) }] }
  assert.equal(shipped.compile({ family: 'xs', context: { ...context, mcp_servers: [server] } }).family, 'xs')
  // Absent fields stay absent.
  assert.equal(shipped.compile({ family: 'xs', context: 'basic', tag: undefined }).family, 'xs')
})

test('rules folders of the caller may lie outside the workspace', (t) => {
  const project = mkdtempSync(join(tmpdir(), 'promptc-project-'))
  t.after(() => rmSync(project, { recursive: true, force: true }))
  writeFileSync(join(project, 'AGENTS.md'), 'Run the linter before every commit.\n')
  const result = shipped.compile({
    family: 'next-gen',
    context: { cwd: project, date: '2026-11-22', rules_from: [project] },
  })
  assert.match(result.prompt, /Run the linter before every commit\./)
})

test('compiles from async code run at once and agree with one at a time', async () => {
  const models = ['claude-sonnet-4-5', 'gpt-4.1', 'gemini-1.5-pro', 'qwen3-coder', 'grok-4']
  const requests = Array.from({ length: 20 }, (_, i) => ({
    model: { id: models[i % models.length] },
    context: 'basic',
  }))
  const together = await Promise.all(requests.map((request) => shipped.compileAsync(request)))
  const alone = requests.map((request) => shipped.compile(request))
  assert.deepEqual(
    together.map((r) => [r.family, r.prompt]),
    alone.map((r) => [r.family, r.prompt]),
  )
  await assert.rejects(shipped.compileAsync({ context: { mode: 'fly' } }), PromptcError)
})

test('reload reads changed files; a broken change keeps the last good load', (t) => {
  const dir = copyOfShipped(t)
  const workspace = Workspace.load(dir)
  const before = workspace.compile({ family: 'xs', context: 'basic' }).prompt
  const role = join(dir, 'components/agent_role.md')
  writeFileSync(role, 'You are Marlin, a careful coding agent.\n')
  assert.equal(workspace.compile({ family: 'xs', context: 'basic' }).prompt, before)
  workspace.reload()
  const after = workspace.compile({ family: 'xs', context: 'basic' }).prompt
  assert.match(after, /You are Marlin/)
  writeFileSync(join(dir, 'promptc.toml'), 'name = [\n')
  thrown(() => workspace.reload())
  assert.equal(workspace.compile({ family: 'xs', context: 'basic' }).prompt, after)
})

test('a workspace loaded by a relative path reloads the same folder after a chdir', (t) => {
  const dir = copyOfShipped(t)
  const start = process.cwd()
  t.after(() => process.chdir(start))
  process.chdir(join(dir, '..'))
  const workspace = Workspace.load(basename(dir))
  assert.equal(workspace.root, dir)
  writeFileSync(join(dir, 'components/agent_role.md'), 'You are Marlin, a careful coding agent.\n')
  // An agent moves into the user's project, then reloads its library.
  process.chdir(repo)
  workspace.reload()
  assert.equal(workspace.root, dir)
  assert.match(workspace.compile({ family: 'xs', context: 'basic' }).prompt, /You are Marlin/)
})

test('explain, stats, route and families answer in camelCase', () => {
  const request = { family: 'gpt', context: 'basic' }
  const explanation = shipped.explain(request)
  assert.equal(explanation.family, 'gpt')
  assert.ok(explanation.components.some((item) => item.included))
  const stats = shipped.stats(request)
  assert.equal(stats.family, 'gpt')
  assert.ok(stats.tokens > 0)
  assert.ok('stablePrefix' in stats, Object.keys(stats).join(', '))
  assert.ok(shipped.families().some((listing) => listing.family === 'gemini'))
})

test('the package version is the crate version', () => {
  const cargo = readFileSync(join(repo, 'Cargo.toml'), 'utf8')
  const crate = cargo.match(/\[workspace\.package\][^[]*?version = "([^"]+)"/)[1]
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  assert.equal(version, crate)
  assert.equal(pkg.version, crate)
})
