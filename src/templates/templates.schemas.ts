import { Type, type Static } from '@sinclair/typebox';
import { OmittableBody, Pagination, PaginationQuery } from '../http/common.schemas.js';
import { KNOWN_VARIABLES } from './render.js';

export const TEMPLATE_TYPES = ['initial', 'reply', 'followup'] as const;

export const MAX_IMPORT_ITEMS = 1000;

// A plain `enum` (not a union of literals) so a wrong value answers "must be one of initial, reply, followup".
export const TemplateType = Type.Unsafe<(typeof TEMPLATE_TYPES)[number]>({
  type: 'string',
  enum: [...TEMPLATE_TYPES],
  description:
    '`initial` opens a thread, `reply` answers a received warmup email, `followup` is the second message of the original sender, answering the reply (the third message of a thread)',
});
export type TemplateType = Static<typeof TemplateType>;

export const Language = Type.String({
  pattern: '^[a-z]{2}$',
  description: 'ISO 639-1 code, lower case (`en`, `de`, ...)',
});

const MARKUP =
  'Markup: `{variable}`, spintax `{Hi|Hello}` (options may hold variables, not other groups), `{{` and `}}` for literal braces. ' +
  `Known variables: ${KNOWN_VARIABLES.join(', ')}.`;

const TemplateFieldsShape = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank' }),
  type: TemplateType,
  language: Language,
  subject: Type.String({ minLength: 1, maxLength: 300, description: `Not blank. ${MARKUP}` }),
  body: Type.String({ minLength: 1, maxLength: 20_000, description: `Not blank; line breaks are kept. ${MARKUP}` }),
};

/** The five fields a client writes: the body of create and replace, and one item of an export. */
export const TemplateFields = Type.Object(TemplateFieldsShape, { additionalProperties: false });
export type TemplateFields = Static<typeof TemplateFields>;

export const TemplatePatch = Type.Partial(TemplateFields, {
  additionalProperties: false,
  minProperties: 1,
  description: 'Any subset of the five fields, at least one',
});
export type TemplatePatch = Static<typeof TemplatePatch>;

export const Template = Type.Object({
  id: Type.String(),
  ...TemplateFieldsShape,
  variables: Type.Array(Type.String(), { description: 'Sorted names of the variables that subject and body use' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Template = Static<typeof Template>;

export const TemplateEnvelope = Type.Object({ template: Template });

export const TemplateListQuery = Type.Object(
  {
    ...PaginationQuery,
    type: Type.Optional(TemplateType),
    language: Type.Optional(Language),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of name or subject' })),
  },
  { additionalProperties: false },
);
export type TemplateListQuery = Static<typeof TemplateListQuery>;

export const TemplateList = Type.Object({ templates: Type.Array(Template), pagination: Pagination });
export type TemplateList = Static<typeof TemplateList>;

export const DuplicateTemplateBody = OmittableBody(
  Type.Object(
    { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default: "<name> (copy)"' })) },
    { additionalProperties: false },
  ),
);
export type DuplicateTemplateBody = Static<typeof DuplicateTemplateBody>;

const PreviewOptionsShape = {
  variables: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 1000 }), {
      description: `Values by variable name (${KNOWN_VARIABLES.join(', ')}); a variable without one gets a sample value`,
    }),
  ),
  seed: Type.Optional(
    Type.Integer({
      minimum: Number.MIN_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Picks the spintax options; the same seed always picks the same ones (default 0)',
    }),
  ),
};

export const PreviewTemplateBody = OmittableBody(Type.Object(PreviewOptionsShape, { additionalProperties: false }));
export type PreviewTemplateBody = Static<typeof PreviewTemplateBody>;

export const PreviewUnsavedBody = Type.Object(
  { subject: TemplateFieldsShape.subject, body: TemplateFieldsShape.body, ...PreviewOptionsShape },
  { additionalProperties: false },
);
export type PreviewUnsavedBody = Static<typeof PreviewUnsavedBody>;

export const PreviewOptions = Type.Object(PreviewOptionsShape);
export type PreviewOptions = Static<typeof PreviewOptions>;

export const Preview = Type.Object({
  subject: Type.String(),
  body: Type.String(),
  html: Type.String({ description: 'The body as escaped HTML paragraphs' }),
  usedSamples: Type.Array(Type.String(), { description: 'Variables filled from a built-in sample, sorted' }),
});
export type Preview = Static<typeof Preview>;

export const PreviewEnvelope = Type.Object({ preview: Preview });

export const TemplateExportQuery = Type.Object(
  { type: Type.Optional(TemplateType), language: Type.Optional(Language) },
  { additionalProperties: false },
);
export type TemplateExportQuery = Static<typeof TemplateExportQuery>;

export const TemplateExport = Type.Object({
  version: Type.Literal(1),
  exportedAt: Type.String({ format: 'date-time' }),
  templates: Type.Array(TemplateFields),
});
export type TemplateExport = Static<typeof TemplateExport>;

export const TemplateImportBody = Type.Object(
  {
    version: Type.Optional(Type.Literal(1)),
    exportedAt: Type.Optional(Type.String()),
    templates: Type.Array(TemplateFields, { minItems: 1, maxItems: MAX_IMPORT_ITEMS }),
  },
  { additionalProperties: false, description: 'An export document, or just `{templates: [...]}`' },
);
export type TemplateImportBody = Static<typeof TemplateImportBody>;

export const ImportResult = Type.Object({ imported: Type.Integer() });
