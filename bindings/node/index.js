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
    return guarded(() => this.#native.compile(request))
  }

  async compileAsync(request) {
    try {
      return await guarded(() => this.#native.compileAsync(request))
    } catch (error) {
      throw translate(error)
    }
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
