// Compiles each JSON Schema with ajv in strict mode (`strict: true`: unknown keywords and
// formats, ignored keywords, loose types and tuples are all errors; anything ajv would still
// only log counts as an error too), then validates data files against them. The schemas are
// draft-07, the dialect of ajv's default class; one naming another draft fails to compile.
//
// Usage: node check.mjs LISTING
// LISTING is a JSON file: { "schemas": { "<name>": "<path>" }, "data": [ { "schema": "<name>",
// "file": "<shown path>", "value": <the file's contents as JSON> } ] }.
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const listing = JSON.parse(readFileSync(process.argv[2], "utf8"));
const problems = [];
const logged = (level) => (...args) => problems.push(`${level}: ${args.join(" ")}`);
const ajv = new Ajv({
  strict: true,
  allErrors: true,
  logger: { log: () => {}, warn: logged("strict mode"), error: logged("error") },
});
addFormats(ajv);

const validators = {};
for (const [name, path] of Object.entries(listing.schemas)) {
  try {
    validators[name] = ajv.compile(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    problems.push(`${path}: ${error.message}`);
  }
}
let checked = 0;
for (const item of listing.data) {
  const validate = validators[item.schema];
  if (!validate) continue;
  checked += 1;
  if (!validate(item.value)) {
    for (const error of validate.errors) {
      problems.push(`${item.file}: ${error.instancePath || "/"} ${error.message}`);
    }
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`ok: ${Object.keys(validators).length} schemas, ${checked} data files`);
