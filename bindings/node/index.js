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

/**
 * The key of the table written in place of a value JSON cannot carry as written, naming what it
 * was: promptc refuses the request at that place (see `NOT_DATA_MARK` in promptc's runtime).
 */
const NOT_DATA = '\u0000promptc-not-data'

/** The levels of lists and objects a request may not reach, itself counted (promptc's `REQUEST_DEPTH`). */
const REQUEST_DEPTH = 128

/**
 * A request as the native module takes it: JSON text, which V8 writes far faster than the
 * native side could read the object one property at a time.
 */
function requestJson(request) {
  if (request === undefined || request === null) return undefined
  let text
  try {
    text = JSON.stringify(request, dataOnly)
  } catch (error) {
    // An object that holds itself, or nested deeper than V8's stack: written again, no deeper
    // than promptc reads, with the place marked.
    if (!(error instanceof TypeError || error instanceof RangeError)) throw error
    text = JSON.stringify(bounded('', request, 1))
  }
  if (text === undefined) throw new TypeError('a request is an object of promptc request fields')
  return text
}

/**
 * Marks what JSON would silently drop, turn into null, or refuse without saying where, rather
 * than send a request other than the one the caller wrote: a function, a symbol, a BigInt, a
 * number that is not finite.
 */
function dataOnly(key, value) {
  const kind = typeof value
  if (kind === 'function' || kind === 'symbol' || kind === 'bigint') return { [NOT_DATA]: kind }
  if (kind === 'number' && !Number.isFinite(value)) return { [NOT_DATA]: String(value) }
  return value
}

/**
 * A copy of `value` as JSON.stringify would write it, with what `dataOnly` marks marked, and
 * the lists and objects that would reach promptc's depth marked in their place.
 */
function bounded(key, value, level) {
  if (value !== null && typeof value === 'object' && typeof value.toJSON === 'function') {
    value = value.toJSON(key)
  }
  value = dataOnly(key, value)
  if (value === null || typeof value !== 'object' || NOT_DATA in value) return value
  // The mark is itself an object a level down: it must stay within the depth promptc reads.
  if (level >= REQUEST_DEPTH - 1) return { [NOT_DATA]: 'too-deep' }
  if (Array.isArray(value)) return value.map((item, index) => bounded(String(index), item, level + 1))
  const fields = {}
  for (const name of Object.keys(value)) {
    Object.defineProperty(fields, name, {
      value: bounded(name, value[name], level + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return fields
}

function guarded(call) {
  try {
    return call()
  } catch (error) {
    throw translate(error)
  }
}

/**
 * The fields made from a part the native module shares between results that made the same:
 * the getter of the part's number, and how its value is made the first time it is met.
 */
const SHARED = {
  prompt: ['promptPart', (native) => native.prompt],
  sections: ['sectionsPart', (native) => JSON.parse(native.sectionsJson)],
  tools: ['toolsPart', (native) => JSON.parse(native.toolsJson)],
  inputs: ['inputsPart', (native) => native.inputs],
  toolDefinitions: ['toolDefinitionsPart', (native) => JSON.parse(native.toolDefinitionsJson)],
}

/** How many parts' values a workspace keeps: those used most recently. */
const PARTS_KEPT = 128

/**
 * The values made from parts, by part number. A value is never given out itself: a result gets
 * a copy, which its reader may change (strings, which cannot be changed, are given as they
 * are). Copying a kept value takes a fraction of the time that parsing it again would.
 */
class Parts {
  #values = new Map()

  value(native, field) {
    const [numberOf, make] = SHARED[field]
    const number = native[numberOf]
    if (number === undefined || number === null) return undefined
    let value = this.#values.get(number)
    if (value === undefined) {
      value = make(native)
      if (this.#values.size >= PARTS_KEPT) this.#values.delete(this.#values.keys().next().value)
    } else {
      // Moved to the end: the first value is the one used least recently.
      this.#values.delete(number)
    }
    this.#values.set(number, value)
    return copy(value)
  }
}

/** A copy of a value made from JSON. */
function copy(value) {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const items = new Array(value.length)
    for (let i = 0; i < value.length; i++) items[i] = copy(value[i])
    return items
  }
  const fields = {}
  for (const key of Object.keys(value)) {
    if (key === '__proto__') {
      // As JSON.parse makes it: a field of that name, not the object's prototype.
      Object.defineProperty(fields, key, {
        value: copy(value[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    } else {
      fields[key] = copy(value[key])
    }
  }
  return fields
}

/**
 * A plain object with the native result's fields: each is made into a JavaScript value on its
 * first read only (an agent that reads the prompt and the tool definitions pays for those),
 * and enumerable, so that spreading and JSON.stringify see every field.
 */
function plainResult(native, parts) {
  // Getters in an object literal: one shape for every result, where defining the properties
  // one by one would make each result an object of its own kind. A field read is kept.
  const kept = new Map()
  const read = (key) => {
    if (!kept.has(key)) {
      kept.set(key, key in SHARED ? parts.value(native, key) : native[key])
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
  #parts = new Parts()

  constructor(loaded) {
    this.#native = loaded
  }

  static load(dir) {
    return new Workspace(guarded(() => native.Workspace.load(dir)))
  }

  reload() {
    guarded(() => this.#native.reload())
    this.#parts = new Parts()
  }

  get root() {
    return this.#native.root
  }

  get warnings() {
    return this.#native.warnings
  }

  compile(request) {
    return plainResult(guarded(() => this.#native.compile(requestJson(request))), this.#parts)
  }

  async compileAsync(request) {
    try {
      return plainResult(await guarded(() => this.#native.compileAsync(requestJson(request))), this.#parts)
    } catch (error) {
      throw translate(error)
    }
  }

  /** Not part of the API: the baseline of bench/compile.mjs. */
  _benchLibraryCompile(request, runs) {
    return this.#native._benchLibraryCompile(requestJson(request), runs)
  }

  explain(request) {
    return guarded(() => this.#native.explain(requestJson(request)))
  }

  stats(request) {
    return guarded(() => this.#native.stats(requestJson(request)))
  }

  route(request) {
    return guarded(() => this.#native.route(requestJson(request)))
  }

  families() {
    return guarded(() => this.#native.families())
  }
}

module.exports = { Workspace, PromptcError, version: native.version() }
