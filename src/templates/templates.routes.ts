import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { describeBytes, LimitExceededError } from '../http/limits.js';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import {
  DuplicateTemplateBody,
  ImportResult,
  PreviewEnvelope,
  PreviewTemplateBody,
  PreviewUnsavedBody,
  TemplateEnvelope,
  TemplateExport,
  TemplateExportQuery,
  TemplateFields,
  TemplateImportBody,
  TemplateList,
  TemplateListQuery,
  TemplatePatch,
} from './templates.schemas.js';
import type { TemplatesService } from './templates.service.js';

const tags = ['templates'];

// `/export`, `/import` and `/preview` are static segments, which the router always prefers to `/:id`.
export function templatesRoutes(templates: TemplatesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        schema: {
          tags,
          operationId: 'listTemplates',
          summary: 'List templates, newest first',
          description:
            'Newest first, paginated. `type` and `language` filter exactly; `q` matches a case-insensitive substring of the name or the subject.',
          querystring: TemplateListQuery,
          response: { 200: TemplateList, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => templates.list(request.workspaceId, request.query),
    );

    app.post(
      '',
      {
        schema: {
          tags,
          operationId: 'createTemplate',
          summary: 'Create a template',
          description:
            'All five fields are required. Unknown variables and unbalanced braces are a 400 naming the field and position. Answers 201 with a `Location` header. A workspace holds at most 1,000 templates by default (WARMUP_MAX_TEMPLATES): 409 `template_limit_reached`.',
          body: TemplateFields,
          response: { 201: TemplateEnvelope, ...errorResponses(400, 401, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const template = await templates.create(request.workspaceId, request.body);
        return reply.code(201).header('Location', `/api/templates/${template.id}`).send({ template });
      },
    );

    app.get(
      '/export',
      {
        schema: {
          tags,
          operationId: 'exportTemplates',
          summary: 'Export templates as a JSON document that import accepts',
          description: 'Oldest first. Sent as an attachment named `warmup-templates-<YYYY-MM-DD>.json`.',
          querystring: TemplateExportQuery,
          response: { 200: TemplateExport, ...errorResponses(400, 401, 429) },
        },
      },
      async (request, reply) => {
        const document = await templates.exportTemplates(request.workspaceId, request.query);
        const day = document.exportedAt.slice(0, 10);
        return reply
          .header('Content-Disposition', `attachment; filename="warmup-templates-${day}.json"`)
          .send(document);
      },
    );

    app.post(
      '/import',
      {
        bodyLimit: templates.maxImportBytes,
        // Only this route's own size limit gets its own code; everything else goes on to the app's handler.
        errorHandler: (error) => {
          if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
            throw new LimitExceededError(
              413,
              'payload_too_large',
              `a template import may be at most ${describeBytes(templates.maxImportBytes)} (WARMUP_MAX_IMPORT_BYTES)`,
            );
          }
          throw error;
        },
        schema: {
          tags,
          operationId: 'importTemplates',
          summary: 'Import templates, all or nothing',
          description:
            'Takes an export document or `{templates: [...]}` (1 to 1,000 items; body up to 10 MiB by default, WARMUP_MAX_IMPORT_BYTES, else 413 `payload_too_large`). If any item is invalid nothing is stored, and the 400 names every bad item by index (`/body/templates/3/body`). A workspace holds at most 1,000 templates by default (WARMUP_MAX_TEMPLATES); an import past that is a 409 `template_limit_reached` and stores nothing.',
          body: TemplateImportBody,
          response: { 201: ImportResult, ...errorResponses(400, 401, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const imported = await templates.importTemplates(request.workspaceId, request.body.templates);
        return reply.code(201).send({ imported });
      },
    );

    app.post(
      '/preview',
      {
        // Renders without saving anything: whoever may read templates may preview them.
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'previewUnsavedTemplate',
          summary: 'Preview text that is not saved',
          description:
            'Validated like a template. Variables without a value get a sample (listed in `usedSamples`); the same `seed` picks the same spintax options. A preview over 256 KiB (subject, body and html; WARMUP_MAX_PREVIEW_BYTES) is a 422 `preview_too_large`.',
          body: PreviewUnsavedBody,
          response: { 200: PreviewEnvelope, ...errorResponses(400, 401, 413, 415, 422, 429) },
        },
      },
      async (request) => ({ preview: templates.previewUnsaved(request.body) }),
    );

    app.get(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'getTemplate',
          summary: 'Get a template',
          description: "One template of this workspace; another workspace's id answers 404.",
          params: IdParams,
          response: { 200: TemplateEnvelope, ...errorResponses(401, 404, 429) },
        },
      },
      async (request) => ({ template: await templates.get(request.workspaceId, request.params.id) }),
    );

    app.patch(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'updateTemplate',
          summary: 'Change some fields of a template',
          description:
            'Any subset of `name`, `type`, `language`, `subject`, `body`; the fields left out keep their values.',
          params: IdParams,
          body: TemplatePatch,
          response: { 200: TemplateEnvelope, ...errorResponses(400, 401, 404, 413, 415, 429) },
        },
      },
      async (request) => ({ template: await templates.update(request.workspaceId, request.params.id, request.body) }),
    );

    app.put(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'replaceTemplate',
          summary: 'Replace a template (all five fields)',
          description: 'All five fields are required and replace the stored ones.',
          params: IdParams,
          body: TemplateFields,
          response: { 200: TemplateEnvelope, ...errorResponses(400, 401, 404, 413, 415, 429) },
        },
      },
      async (request) => ({ template: await templates.replace(request.workspaceId, request.params.id, request.body) }),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'deleteTemplate',
          summary: 'Delete a template',
          description: 'Sent messages and interactions keep the subject they were sent with.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 404, 429) },
        },
      },
      async (request, reply) => {
        await templates.remove(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/:id/duplicate',
      {
        schema: {
          tags,
          operationId: 'duplicateTemplate',
          summary: 'Copy a template',
          description:
            'The body may be omitted; the copy is named `"<name> (copy)"` unless a `name` is given. Counts against WARMUP_MAX_TEMPLATES (409 `template_limit_reached`).',
          params: IdParams,
          body: DuplicateTemplateBody,
          response: { 201: TemplateEnvelope, ...errorResponses(400, 401, 404, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const template = await templates.duplicate(request.workspaceId, request.params.id, request.body?.name);
        return reply.code(201).header('Location', `/api/templates/${template.id}`).send({ template });
      },
    );

    app.post(
      '/:id/preview',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'previewTemplate',
          summary: 'Preview a saved template',
          description:
            'The body may be omitted. Variables without a value get a sample (listed in `usedSamples`); the same `seed` picks the same spintax options. A preview over 256 KiB (WARMUP_MAX_PREVIEW_BYTES) is a 422 `preview_too_large`.',
          params: IdParams,
          body: PreviewTemplateBody,
          response: { 200: PreviewEnvelope, ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
        },
      },
      async (request) => ({
        preview: await templates.preview(request.workspaceId, request.params.id, request.body ?? {}),
      }),
    );
  };
}
