import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { DEFAULT_LIMITS, type Limits } from '../config.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import type { Database, NewTemplateRow, TemplateRow } from '../db/schema.js';
import { pagination } from '../http/common.schemas.js';
import { NotFoundError, ValidationError, type FieldError } from '../http/errors.js';
import { describeBytes, LimitExceededError } from '../http/limits.js';
import { DEFAULT_TEMPLATES } from './default-templates.js';
import { analyzeText, fillWithSamples, KNOWN_VARIABLES, renderMessage, type TemplateVariable } from './render.js';
import { createTemplatesRepository, type TemplateFilter } from './templates.repository.js';

// A template whose words are a shipped default's is the default, whoever stored it: it is public
// text, so it is not what a workspace's "own templates" means.
const SHIPPED_DEFAULTS = new Set(DEFAULT_TEMPLATES.map((t) => `${t.type}\n${t.language}\n${t.subject}\n${t.body}`));

function isShippedDefault(row: Pick<TemplateRow, 'type' | 'language' | 'subject' | 'body'>): boolean {
  return SHIPPED_DEFAULTS.has(`${row.type}\n${row.language}\n${row.subject}\n${row.body}`);
}
import type {
  Preview,
  PreviewOptions,
  Template,
  TemplateExport,
  TemplateExportQuery,
  TemplateFields,
  TemplateList,
  TemplateListQuery,
  TemplatePatch,
  TemplateType,
} from './templates.schemas.js';

export interface TemplatesServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** maxTemplates, maxPreviewBytes and maxImportBytes apply here (default: DEFAULT_LIMITS). */
  limits?: Pick<Limits, 'maxTemplates' | 'maxPreviewBytes' | 'maxImportBytes'>;
}

const NAME_MAX = 200;
const KNOWN = new Set<string>(KNOWN_VARIABLES);

function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    language: row.language,
    subject: row.subject,
    body: row.body,
    variables: JSON.parse(row.variables) as string[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The first `max` characters, counted in code points as the schema counts them (no split surrogate pairs). */
function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Same wording as the schema errors: the first problem, and how many more. */
function validationFailed(errors: FieldError[]): ValidationError {
  const [first] = errors;
  const where = first.path.split('/').filter(Boolean).slice(1).join('.');
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new ValidationError(`${where}: ${first.message}${more}`, errors);
}

/**
 * The rules the schema cannot say: no blank name, subject or body, and markup that parses.
 * `at` is where the fields sit in the request (`/body`, `/body/templates/3`).
 */
function checkFields(fields: Partial<TemplateFields>, at: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['name', 'subject', 'body'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (value.trim() === '') {
      errors.push({ path: `${at}/${key}`, message: 'must not be blank' });
    } else if (key !== 'name') {
      for (const problem of analyzeText(value).problems)
        errors.push({ path: `${at}/${key}`, message: problem.message });
    }
  }
  return errors;
}

function usedVariables(subject: string, body: string): TemplateVariable[] {
  return [...new Set([...analyzeText(subject).variables, ...analyzeText(body).variables])].sort();
}

function checkPreviewValues(variables: Record<string, string> | undefined): void {
  const unknown = Object.keys(variables ?? {}).filter((name) => !KNOWN.has(name));
  if (unknown.length > 0) {
    throw validationFailed(
      unknown.map((name) => ({
        path: `/body/variables/${pointer(name)}`,
        message: `is not a known variable; known variables: ${KNOWN_VARIABLES.join(', ')}`,
      })),
    );
  }
}

export function createTemplatesService({ db, clock, limits = DEFAULT_LIMITS }: TemplatesServiceDeps) {
  const repository = createTemplatesRepository(db);

  /** Refuses `adding` more templates past the quota; concurrent writers may overshoot by their number. */
  async function checkRoom(workspaceId: string, adding: number, executor: Kysely<Database> = db): Promise<void> {
    const count = await repository.count(workspaceId, executor);
    if (count + adding > limits.maxTemplates) {
      throw new LimitExceededError(
        409,
        'template_limit_reached',
        `this workspace may hold ${limits.maxTemplates} templates (WARMUP_MAX_TEMPLATES); it has ${count}` +
          (adding > 1 ? ` and the import adds ${adding}` : '') +
          '; delete some first',
      );
    }
  }

  function newRow(workspaceId: string, fields: TemplateFields): NewTemplateRow {
    const now = clock.now();
    return {
      id: newId('tpl', now.getTime()),
      workspace_id: workspaceId,
      name: fields.name,
      type: fields.type,
      language: fields.language,
      subject: fields.subject,
      body: fields.body,
      variables: JSON.stringify(usedVariables(fields.subject, fields.body)),
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
  }

  async function findRow(workspaceId: string, id: string): Promise<TemplateRow> {
    const row = await repository.findById(workspaceId, id);
    if (!row) throw new NotFoundError(`template ${id} not found`);
    return row;
  }

  async function write(workspaceId: string, id: string, changes: Partial<TemplateFields>): Promise<Template> {
    const errors = checkFields(changes, '/body');
    if (errors.length > 0) throw validationFailed(errors);
    const current = await findRow(workspaceId, id);
    const subject = changes.subject ?? current.subject;
    const body = changes.body ?? current.body;
    const row = await repository.update(workspaceId, id, {
      ...changes,
      variables: JSON.stringify(usedVariables(subject, body)),
      updated_at: clock.now().toISOString(),
    });
    if (!row) throw new NotFoundError(`template ${id} not found`);
    return toTemplate(row);
  }

  function render(parts: { subject: string; body: string }, options: PreviewOptions): Preview {
    const { values, usedSamples } = fillWithSamples(usedVariables(parts.subject, parts.body), options.variables ?? {});
    // A fixed default seed makes a repeated preview answer the same; a client asks for variety with a seed.
    const rendered = renderMessage(parts, values, options.seed ?? 0);
    // Short text can repeat long values thousands of times: the answer, not the request, is capped.
    const bytes =
      Buffer.byteLength(rendered.subject) + Buffer.byteLength(rendered.body) + Buffer.byteLength(rendered.html);
    if (bytes > limits.maxPreviewBytes) {
      throw new LimitExceededError(
        422,
        'preview_too_large',
        `the rendered preview would be ${describeBytes(bytes)}, over the limit of ${describeBytes(limits.maxPreviewBytes)} (WARMUP_MAX_PREVIEW_BYTES); use shorter variable values or fewer repetitions`,
      );
    }
    return { ...rendered, usedSamples };
  }

  return {
    /** The body limit of POST /api/templates/import. */
    maxImportBytes: limits.maxImportBytes,

    async list(workspaceId: string, query: TemplateListQuery): Promise<TemplateList> {
      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const filter: TemplateFilter = { type: query.type, language: query.language, q: query.q };
      const { rows, total } = await repository.list(workspaceId, filter, { offset: (page - 1) * limit, limit });
      return { templates: rows.map(toTemplate), pagination: pagination(page, limit, total) };
    },

    async get(workspaceId: string, id: string): Promise<Template> {
      return toTemplate(await findRow(workspaceId, id));
    },

    async create(workspaceId: string, fields: TemplateFields): Promise<Template> {
      const errors = checkFields(fields, '/body');
      if (errors.length > 0) throw validationFailed(errors);
      await checkRoom(workspaceId, 1);
      return toTemplate(await repository.insert(newRow(workspaceId, fields)));
    },

    /** PATCH: the fields given, at least one (the schema insists). */
    update(workspaceId: string, id: string, patch: TemplatePatch): Promise<Template> {
      return write(workspaceId, id, patch);
    },

    /** PUT: all five fields. */
    replace(workspaceId: string, id: string, fields: TemplateFields): Promise<Template> {
      return write(workspaceId, id, fields);
    },

    async remove(workspaceId: string, id: string): Promise<void> {
      // Interactions and sent messages keep their own subject and a plain template id, so history survives.
      if (!(await repository.delete(workspaceId, id))) throw new NotFoundError(`template ${id} not found`);
    },

    async duplicate(workspaceId: string, id: string, name?: string): Promise<Template> {
      if (name !== undefined) {
        const errors = checkFields({ name }, '/body');
        if (errors.length > 0) throw validationFailed(errors);
      }
      const source = await findRow(workspaceId, id);
      await checkRoom(workspaceId, 1);
      const copy = newRow(workspaceId, {
        name: name ?? truncate(`${source.name} (copy)`, NAME_MAX),
        type: source.type,
        language: source.language,
        subject: source.subject,
        body: source.body,
      });
      return toTemplate(await repository.insert(copy));
    },

    /** A saved template rendered with the given values, samples for the rest. */
    async preview(workspaceId: string, id: string, options: PreviewOptions): Promise<Preview> {
      checkPreviewValues(options.variables);
      const row = await findRow(workspaceId, id);
      return render({ subject: row.subject, body: row.body }, options);
    },

    /** Text that is not saved yet (an editor's live preview); validated like a template. */
    previewUnsaved(input: { subject: string; body: string } & PreviewOptions): Preview {
      const errors = checkFields({ subject: input.subject, body: input.body }, '/body');
      if (errors.length > 0) throw validationFailed(errors);
      checkPreviewValues(input.variables);
      return render(input, input);
    },

    async exportTemplates(workspaceId: string, query: TemplateExportQuery): Promise<TemplateExport> {
      const rows = await repository.listAll(workspaceId, { type: query.type, language: query.language });
      return {
        version: 1,
        exportedAt: clock.now().toISOString(),
        templates: rows.map((row) => ({
          name: row.name,
          type: row.type,
          language: row.language,
          subject: row.subject,
          body: row.body,
        })),
      };
    },

    /** All or nothing: every item is checked first, and the rows go in one transaction. */
    async importTemplates(workspaceId: string, items: readonly TemplateFields[]): Promise<number> {
      const errors = items.flatMap((item, index) => checkFields(item, `/body/templates/${index}`));
      if (errors.length > 0) throw validationFailed(errors);
      const rows = items.map((item) => newRow(workspaceId, item));
      await inTransaction(db, async (trx) => {
        await checkRoom(workspaceId, rows.length, trx);
        await repository.insertMany(trx, rows);
      });
      return rows.length;
    },

    /**
     * The starting templates of a new workspace, in the transaction that creates it (the
     * workspaces service's `onWorkspaceCreated`).
     */
    async seedDefaultTemplates(trx: Kysely<Database>, workspaceId: string): Promise<void> {
      const rows = DEFAULT_TEMPLATES.map((template) => {
        const errors = checkFields(template, `/defaults/${template.name}`);
        if (errors.length > 0)
          throw new Error(`default template "${template.name}" is invalid: ${errors.map((e) => e.message).join('; ')}`);
        return newRow(workspaceId, template);
      });
      await repository.insertMany(trx, rows);
    },

    /**
     * The template the engine sends: one of the workspace's templates of `type` in `language`,
     * else in English, else undefined. The same seed over the same templates picks the same one
     * (seed modulo their number, in creation order); `ownOnly` leaves the shipped defaults out. Pass `executor` when calling inside a
     * transaction: SQLite has one connection, so reading through `db` there would wait forever.
     */
    async pickTemplate(
      workspaceId: string,
      criteria: { type: TemplateType; language: string; ownOnly?: boolean },
      seed: number,
      executor: Kysely<Database> = db,
    ): Promise<Template | undefined> {
      const list = async (language: string) => {
        const rows = await repository.listAll(workspaceId, { type: criteria.type, language }, executor);
        return criteria.ownOnly ? rows.filter((row) => !isShippedDefault(row)) : rows;
      };
      let candidates = await list(criteria.language);
      if (candidates.length === 0 && criteria.language !== 'en') candidates = await list('en');
      if (candidates.length === 0) return undefined;
      const index = ((Math.trunc(seed) % candidates.length) + candidates.length) % candidates.length;
      return toTemplate(candidates[index]);
    },
  };
}

export type TemplatesService = ReturnType<typeof createTemplatesService>;
