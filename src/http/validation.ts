import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(coerceTypes: boolean | 'array') {
  // removeAdditional is off on purpose: an unknown field is a 400, so a typo never passes silently.
  const ajv = new Ajv.default({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

/**
 * Bodies are JSON and must carry the right types ("5" is not a number); query strings and path
 * parameters are text, so they are coerced.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
