import { Editable } from '../components/editable.js';
import { useRef, useState } from 'preact/hooks';
import type { Template, TemplateListQuery } from '../api.js';
import { ApiError, api } from '../api.js';
import { ConfirmDialog } from '../components/dialog.js';
import { IconCopy, IconDownload, IconPlus, IconTemplate, IconTrash, IconUpload } from '../components/icons.js';
import { duplicateAndOpen } from '../components/template-actions.js';
import { toast } from '../components/toasts.js';
import { ACTIONS_COLUMN, PagedTable } from '../components/paged-table.js';
import { Badge, Button, Card, EmptyState, ErrorBox, Link, PageHeader, errorMessage } from '../components/ui.js';
import { FilterSelect, SearchInput } from '../components/fields.js';
import { LANGUAGES, TYPE_LABELS, asOptions, formatDateTime, languageName } from '../format.js';
import { useDebounced, useResource, useTitle } from '../hooks.js';

const TYPE_TONES: Record<string, 'blue' | 'green' | 'violet'> = { initial: 'blue', reply: 'green', followup: 'violet' };

export function TypeBadge({ type }: { type: string }) {
  return <Badge tone={TYPE_TONES[type] ?? 'blue'}>{TYPE_LABELS[type] ?? type}</Badge>;
}

const TYPE_FILTERS = [{ value: '', label: 'All types' }, ...asOptions(TYPE_LABELS)];
const LANGUAGE_FILTERS = [{ value: '', label: 'All languages' }, ...asOptions(LANGUAGES)];

/** The two-letter code of the browser's language if the dashboard knows it, else English. */
function userLanguage(): string {
  const code = (typeof navigator === 'undefined' ? 'en' : navigator.language).slice(0, 2).toLowerCase();
  return code in LANGUAGES ? code : 'en';
}

/** Reads an uploaded export file and imports it; a 400 names the bad items by index. */
async function importFile(file: File): Promise<number> {
  let document: unknown;
  try {
    document = JSON.parse(await file.text());
  } catch {
    throw new Error(`${file.name} is not a JSON file. Import a file made by Export.`);
  }
  try {
    return await api.importTemplates(document);
  } catch (error) {
    if (error instanceof ApiError && error.errors.length > 0) {
      const first = error.errors
        .slice(0, 3)
        .map((e) => `${e.path.replace(/^\/body\//, '')}: ${e.message}`)
        .join('; ');
      throw new Error(
        `Nothing was imported. ${first}${error.errors.length > 3 ? ` (and ${error.errors.length - 3} more)` : ''}`,
      );
    }
    throw error;
  }
}

export function TemplatesPage() {
  useTitle('Templates');
  const [page, setPage] = useState(1);
  const [type, setType] = useState('');
  // Opens on the browser's language when templates exist in it (English otherwise); "All languages" is one click away.
  const [language, setLanguage] = useState(userLanguage);
  const [search, setSearch] = useState('');
  const q = useDebounced(search.trim(), 300);
  const list = useResource(
    () =>
      api.templates({
        page,
        limit: 20,
        type: (type || undefined) as TemplateListQuery['type'],
        language: language || undefined,
        q: q || undefined,
      }),
    [page, type, language, q],
  );
  const [deleting, setDeleting] = useState<Template>();
  const [importing, setImporting] = useState(false);
  const [importError, setImportError] = useState<unknown>();
  const [exporting, setExporting] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const filtered = type !== '' || language !== '' || q !== '';

  async function onImport(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    setImporting(true);
    setImportError(undefined);
    try {
      const count = await importFile(file);
      toast(`Imported ${count} template${count === 1 ? '' : 's'}`);
      list.reload();
    } catch (error) {
      setImportError(error);
    } finally {
      setImporting(false);
    }
  }

  async function onExport() {
    setExporting(true);
    try {
      const name = await api.exportTemplates({
        type: (type || undefined) as TemplateListQuery['type'],
        language: language || undefined,
      });
      toast(`Downloaded ${name}`);
    } catch (error) {
      toast(`Export failed: ${errorMessage(error)}`, 'error');
    } finally {
      setExporting(false);
    }
  }

  return (
    <>
      <PageHeader
        title="Templates"
        subtitle="The emails your mailboxes send each other, with variables and spintax"
        actions={
          <>
            <input
              ref={fileInput}
              type="file"
              accept="application/json,.json"
              class="visually-hidden"
              tabIndex={-1}
              aria-hidden="true"
              onChange={onImport}
              data-testid="import-file"
            />
            <Editable>
              <Button icon={<IconUpload size={16} />} loading={importing} onClick={() => fileInput.current?.click()}>
                Import
              </Button>
            </Editable>
            <Button icon={<IconDownload size={16} />} loading={exporting} onClick={onExport}>
              Export
            </Button>
            <Editable>
              <Link to="/templates/new" class="btn btn-primary">
                <IconPlus size={18} />
                <span>New template</span>
              </Link>
            </Editable>
          </>
        }
      />
      {importError !== undefined && <ErrorBox error={importError} title="Import failed" />}
      <Card bodyClass="flush">
        <div class="toolbar">
          <SearchInput
            id="template-search"
            label="Search templates"
            placeholder="Search name or subject"
            value={search}
            onValue={(text) => {
              setSearch(text);
              setPage(1);
            }}
          />
          <FilterSelect label="Type" value={type} options={TYPE_FILTERS} onValue={(v) => (setType(v), setPage(1))} />
          <FilterSelect
            label="Language"
            value={language}
            options={LANGUAGE_FILTERS}
            onValue={(v) => (setLanguage(v), setPage(1))}
          />
        </div>
        <PagedTable
          list={list}
          items={(data) => data.templates}
          row={(template) => (
            <tr key={template.id}>
              <td class="cell-primary">
                <Link to={`/templates/${encodeURIComponent(template.id)}`} class="row-title">
                  {template.name}
                </Link>
                <span class="row-sub truncate">{template.subject}</span>
              </td>
              <td data-label="Type">
                <TypeBadge type={template.type} />
              </td>
              <td data-label="Language">{languageName(template.language)}</td>
              <td data-label="Variables">
                <span class="muted">{template.variables.length === 0 ? 'none' : template.variables.length}</span>
              </td>
              <td data-label="Updated" class="nowrap muted">
                {formatDateTime(template.updatedAt)}
              </td>
              <td class="cell-actions">
                <Editable>
                  <div class="row-actions compact">
                    <Button
                      size="sm"
                      variant="ghost"
                      icon={<IconCopy size={16} />}
                      aria-label={`Duplicate ${template.name}`}
                      title="Duplicate"
                      onClick={() => duplicateAndOpen(template)}
                    />
                    <Button
                      size="sm"
                      variant="danger-ghost"
                      icon={<IconTrash size={16} />}
                      aria-label={`Delete ${template.name}`}
                      title="Delete"
                      onClick={() => setDeleting(template)}
                    />
                  </div>
                </Editable>
              </td>
            </tr>
          )}
          columns={['Template', 'Type', 'Language', 'Variables', 'Updated', ACTIONS_COLUMN]}
          caption="Templates"
          tableClass="table responsive-table templates-table"
          noun="templates"
          errorTitle="Could not load the templates"
          loadingLabel="Loading templates"
          onPage={setPage}
          empty={
            filtered ? (
              <EmptyState title="No template matches">Try another search, type or language.</EmptyState>
            ) : (
              <EmptyState
                icon={<IconTemplate size={28} />}
                title="No templates yet"
                action={
                  <Editable>
                    <Link to="/templates/new" class="btn btn-primary">
                      <IconPlus size={18} />
                      <span>New template</span>
                    </Link>
                  </Editable>
                }
              >
                Warmup emails read best when they sound like you. Write a few first emails, replies and follow-ups.
              </EmptyState>
            )
          }
        />
      </Card>
      {deleting && (
        <ConfirmDialog
          title="Delete this template?"
          confirmLabel="Delete template"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.deleteTemplate(deleting.id);
            toast(`${deleting.name} was deleted`);
            setDeleting(undefined);
            list.reload();
          }}
        >
          <p>
            <strong>{deleting.name}</strong> will no longer be sent. Emails already sent keep their subject in the
            history.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
