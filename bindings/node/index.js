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
  const result = {}
  for (const key of RESULT_FIELDS) {
    Object.defineProperty(result, key, {
      enumerable: true,
      configurable: true,
      get() {
        const value = key in AS_JSON ? parsed(native[AS_JSON[key]]) : native[key]
        Object.defineProperty(result, key, { value, enumerable: true, writable: true })
        return value
      },
    })
  }
  return result
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
