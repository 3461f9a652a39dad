// The example agent loop runs and prints what its comments promise.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

test('the example agent loop compiles for two models and the project rules', () => {
  const example = fileURLToPath(new URL('../examples/agent.mjs', import.meta.url))
  const run = spawnSync(process.execPath, [example], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /^## claude-sonnet-4-5: family next-gen /m)
  assert.match(run.stdout, /^## gpt-4\.1: family gpt /m)
  assert.match(run.stdout, /^tools: execute_command, read_file, /m)
  assert.equal(run.stdout.match(/^project rules in the prompt: yes$/gm)?.length, 2, run.stdout)
})
