import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';

export const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

/**
 * The deepest page a list goes to: with 100 a page, a hundred million rows. Without a maximum,
 * `page=1e300` is an integer to the schema and an offset no database takes (a 500).
 */
export const MAX_PAGE = 1_000_000;

export const PaginationQuery = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: `Page number, 1..${MAX_PAGE}` }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1..100' })),
};

export const Pagination = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  totalPages: Type.Integer(),
});
export type Pagination = Static<typeof Pagination>;

export function pagination(page: number, limit: number, total: number): Pagination {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}

/** Standard error responses for a route's OpenAPI entry. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const ref = Type.Ref('Problem');
  return Object.fromEntries(statuses.map((s) => [s, ref]));
}

export const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Calendar day YYYY-MM-DD' });

/**
 * Fastify validates an omitted body as `null`, so a body that may be left out must accept null;
 * a type list (not a union) keeps the errors about a present body precise.
 */
export function OmittableBody<T extends TObject>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: ['object', 'null'] });
}
