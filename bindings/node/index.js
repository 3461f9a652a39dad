'use strict'
// promptc for Node.js. The native module does the work; this file gives its errors a class
// of their own, `PromptcError`, with the diagnostics as data.

const native = require('./promptc.node')

/** The start of the message of every error the native module throws for promptc. */
const FAILURE_MARK = 'promptc-error:'

class PromptcError extends Error {
  constructor(message, diagnostics) {
    super(message)
    this.name = 'PromptcError'
    this.diagnostics = diagnostics
  }
}

function translate(error) {
  if (error instanceof Error && error.message.startsWith(FAILURE_MARK)) {
    const body = JSON.parse(error.message.slice(FAILURE_MARK.length))
    return new PromptcError(body.message, body.diagnostics)
  }
  return error
}

function guarded(call) {
  try {
    return call()
  } catch (error) {
    throw translate(error)
  }
}

/** The fields of a result, read from the native one when first used, then kept. */
const RESULT_FIELDS = [
  'family',
  'variant',
  'version',
  'prompt',
  'sections',
  'tools',
  'model',
  'inputs',
  'dialect',
  'toolDefinitions',
  'warnings',
]

/**
 * A plain object with the native result's fields: each is made into a JavaScript value on its
 * first read only (an agent that reads the prompt and the tool definitions pays for those),
 * and enumerable, so that spreading and JSON.stringify see every field.
 */
/** Fields the native result gives as JSON text, and the getter that gives it. */
const AS_JSON = { sections: 'sectionsJson', tools: 'toolsJson', toolDefinitions: 'toolDefinitionsJson' }

function parsed(json) {
  return json === undefined || json === null ? undefined : JSON.parse(json)
}

function plainResult(native) {
  // Getters in an object literal: one shape for every result, where defining the properties
  // one by one would make each result an object of its own kind. A part read is kept.
  const kept = new Map()
  const read = (key) => {
    if (!kept.has(key)) {
      kept.set(key, key in AS_JSON ? parsed(native[AS_JSON[key]]) : native[key])
    }
    return kept.get(key)
  }
  return {
    get family() { return read('family') },
    get variant() { return read('variant') },
    get version() { return read('version') },
    get prompt() { return read('prompt') },
    get sections() { return read('sections') },
    get tools() { return read('tools') },
    get model() { return read('model') },
    get inputs() { return read('inputs') },
    get dialect() { return read('dialect') },
    get toolDefinitions() { return read('toolDefinitions') },
    get warnings() { return read('warnings') },
  }
}

class Workspace {
  #native

  constructor(loaded) {
    this.#native = loaded
  }

  static load(dir) {
    return new Workspace(guarded(() => native.Workspace.load(dir)))
  }

  reload() {
    guarded(() => this.#native.reload())
  }

  get root() {
    return this.#native.root
  }

  get warnings() {
    return this.#native.warnings
  }

  compile(request) {
    return plainResult(guarded(() => this.#native.compile(request)))
  }

  async compileAsync(request) {
    try {
      return plainResult(await guarded(() => this.#native.compileAsync(request)))
    } catch (error) {
      throw translate(error)
    }
  }

  /** Not part of the API: the baseline of bench/compile.mjs. */
  _benchLibraryCompile(request, runs) {
    return this.#native._benchLibraryCompile(request, runs)
  }

  explain(request) {
    return guarded(() => this.#native.explain(request))
  }

  stats(request) {
    return guarded(() => this.#native.stats(request))
  }

  route(request) {
    return guarded(() => this.#native.route(request))
  }

  families() {
    return guarded(() => this.#native.families())
  }
}

module.exports = { Workspace, PromptcError, version: native.version() }
