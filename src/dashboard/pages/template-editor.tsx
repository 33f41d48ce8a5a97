import { useCanEdit } from '../access.js';
import { Editable } from '../components/editable.js';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { KNOWN_VARIABLES, analyzeText } from '../../templates/render.js';
import type { Preview, Template, TemplateFields } from '../api.js';
import { ApiError, api } from '../api.js';
import { ConfirmDialog } from '../components/dialog.js';
import { IconCopy, IconShuffle, IconTrash } from '../components/icons.js';
import { duplicateAndOpen } from '../components/template-actions.js';
import { toast } from '../components/toasts.js';
import {
  Button,
  Card,
  ErrorBox,
  Link,
  Loading,
  PageHeader,
  RecordPending,
  Spinner,
  errorMessage,
} from '../components/ui.js';
import { SelectField, TextAreaField, TextField } from '../components/fields.js';
import { LANGUAGES, TYPE_LABELS, asOptions } from '../format.js';
import { useDebounced, useResource, useTitle } from '../hooks.js';
import { navigate } from '../router.js';

const EMPTY: TemplateFields = { name: '', type: 'initial', language: 'en', subject: '', body: '' };
const TYPE_OPTIONS = asOptions(TYPE_LABELS);
const LANGUAGE_OPTIONS = Object.entries(LANGUAGES).map(([value, label]) => ({ value, label: `${label} (${value})` }));

/** Spintax groups (`{a|b}`) at the top level of a text; `{{` and `}}` are literal braces. */
function countSpintax(text: string): number {
  let groups = 0;
  let depth = 0;
  let hasChoice = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if ((char === '{' || char === '}') && text[i + 1] === char) {
      i++;
      continue;
    }
    if (char === '{') {
      depth++;
      if (depth === 1) hasChoice = false;
    } else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0 && hasChoice) groups++;
    } else if (char === '|' && depth === 1) {
      hasChoice = true;
    }
  }
  return groups;
}

function randomSeed(): number {
  return Math.floor(Math.random() * 1_000_000);
}

function PreviewPanel({
  subject,
  body,
  seed,
  onShuffle,
}: {
  subject: string;
  body: string;
  seed: number;
  onShuffle: () => void;
}) {
  const input = useDebounced({ subject, body, seed }, 350);
  const ready = input.subject.trim() !== '' && input.body.trim() !== '';
  const [state, setState] = useState<{ preview?: Preview; error?: unknown; loading: boolean }>({ loading: false });
  const variables = useMemo(() => analyzeText(`${subject}\n${body}`).variables, [subject, body]);
  const spintax = useMemo(() => countSpintax(subject) + countSpintax(body), [subject, body]);

  useEffect(() => {
    if (!ready) {
      setState({ loading: false });
      return;
    }
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    api.previewTemplate({ subject: input.subject, body: input.body, seed: input.seed }).then(
      (preview) => current && setState({ preview, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [input.subject, input.body, input.seed, ready]);

  const sampled = new Set(state.preview?.usedSamples ?? []);
  return (
    <Card
      title="Preview"
      subtitle={
        spintax > 0
          ? `${spintax} spintax group${spintax === 1 ? '' : 's'} · variation ${seed}`
          : 'Variables filled with sample values'
      }
      class="preview-card"
      actions={
        <Button
          size="sm"
          icon={<IconShuffle size={16} />}
          onClick={onShuffle}
          disabled={!ready}
          title="Pick other spintax options"
        >
          Shuffle
        </Button>
      }
    >
      <div aria-live="polite" class="preview-live">
        {!ready ? (
          <p class="muted preview-empty">Write a subject and a body to see the email as a recipient would.</p>
        ) : state.error !== undefined ? (
          <div class="alert alert-error" role="alert">
            <div class="alert-body">
              <strong>The template has a problem</strong>
              {/* every problem once: the list when there is one (its summary repeats the first), else the summary */}
              {state.error instanceof ApiError && state.error.errors.length > 0 ? (
                <ul class="problem-list">
                  {state.error.errors.map((e) => (
                    <li key={e.path + e.message} class="mono-small">
                      {e.path.replace(/^\/body\//, '')}: {e.message}
                    </li>
                  ))}
                </ul>
              ) : (
                <p>{errorMessage(state.error)}</p>
              )}
            </div>
          </div>
        ) : !state.preview ? (
          <Loading label="Rendering the preview" rows={4} />
        ) : (
          <article class={`mail-preview ${state.loading ? 'is-refreshing' : ''}`} aria-label="Rendered email">
            <div class="mail-subject" data-testid="preview-subject">
              {state.preview.subject}
            </div>
            <div class="mail-body" data-testid="preview-body">
              {state.preview.body}
            </div>
          </article>
        )}
        {state.loading && state.preview && (
          <span class="preview-spinner">
            <Spinner label="Updating the preview" />
          </span>
        )}
      </div>
      <div class="variables">
        <h3 class="mini-title">Variables in this template</h3>
        {variables.length === 0 ? (
          <p class="muted">None yet. Click one below to insert it into the body.</p>
        ) : (
          <ul class="chips" aria-label="Variables used">
            {variables.map((name) => (
              <li key={name} class="chip chip-used">
                <code>{`{${name}}`}</code>
                {sampled.has(name) && <span class="chip-note">sample</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
    </Card>
  );
}

/** A template as a viewer sees it: its fields as text, nothing to type into. */
function TemplateReadView({ template }: { template: Template }) {
  return (
    <div class="editor-form">
      <Card title="Template" subtitle="View only: your role can read templates, not change them">
        <dl class="details-list template-read">
          <div>
            <dt>Name</dt>
            <dd>{template.name}</dd>
          </div>
          <div>
            <dt>Type</dt>
            <dd>{TYPE_LABELS[template.type] ?? template.type}</dd>
          </div>
          <div>
            <dt>Language</dt>
            <dd>{LANGUAGES[template.language] ?? template.language}</dd>
          </div>
          <div>
            <dt>Subject</dt>
            <dd>{template.subject}</dd>
          </div>
          <div class="template-read-body">
            <dt>Body</dt>
            <dd>
              <pre>{template.body}</pre>
            </dd>
          </div>
        </dl>
      </Card>
      <div class="form-buttons">
        <Link to="/templates" class="btn">
          Back to templates
        </Link>
      </div>
    </div>
  );
}

function Editor({ template }: { template?: Template }) {
  const canEdit = useCanEdit();
  const [fields, setFields] = useState<TemplateFields>(() =>
    template
      ? {
          name: template.name,
          type: template.type,
          language: template.language,
          subject: template.subject,
          body: template.body,
        }
      : EMPTY,
  );
  const [saved, setSaved] = useState<TemplateFields>(fields);
  const [seed, setSeed] = useState(1);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const bodyRef = useRef<HTMLTextAreaElement | null>(null);
  const dirty = JSON.stringify(fields) !== JSON.stringify(saved);
  const set = <K extends keyof TemplateFields>(field: K, value: TemplateFields[K]) =>
    setFields((current) => ({ ...current, [field]: value }));

  function insertVariable(name: string) {
    const area = bodyRef.current;
    const token = `{${name}}`;
    if (!area) return set('body', fields.body + token);
    const start = area.selectionStart ?? fields.body.length;
    const end = area.selectionEnd ?? start;
    const next = fields.body.slice(0, start) + token + fields.body.slice(end);
    set('body', next);
    requestAnimationFrame(() => {
      area.focus();
      area.setSelectionRange(start + token.length, start + token.length);
    });
  }

  async function save(event: Event) {
    event.preventDefault();
    // The button stays enabled when nothing changed: a disabled button would drop the focus.
    if (template && !dirty) {
      toast('No changes to save');
      return;
    }
    setBusy(true);
    setErrors({});
    setFailure(undefined);
    try {
      if (template) {
        await api.updateTemplate(template.id, fields);
        setSaved(fields);
        toast('Template saved');
      } else {
        const created = await api.createTemplate(fields);
        toast(`Created ${created.name}`);
        navigate(`/templates/${encodeURIComponent(created.id)}`, { replace: true });
      }
    } catch (error) {
      if (error instanceof ApiError && error.status === 400 && Object.keys(error.fieldErrors()).length > 0)
        setErrors(error.fieldErrors());
      else setFailure(error);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <PageHeader
        back={{ to: '/templates', label: 'Templates' }}
        title={template ? fields.name || template.name : 'New template'}
        subtitle={
          !canEdit
            ? 'View only'
            : dirty
              ? 'Unsaved changes'
              : template
                ? 'All changes saved'
                : 'Write once; every send picks its own spintax variation'
        }
        actions={
          template && (
            <Editable>
              <Button icon={<IconCopy size={16} />} onClick={() => duplicateAndOpen(template)}>
                Duplicate
              </Button>
              <Button variant="danger-ghost" icon={<IconTrash size={16} />} onClick={() => setDeleting(true)}>
                Delete
              </Button>
            </Editable>
          )
        }
      />
      <div class="editor-grid">
        {!canEdit && template ? (
          <TemplateReadView template={template} />
        ) : (
          <form class="editor-form" onSubmit={save} noValidate>
            <Card title="Template">
              <TextField
                label="Name"
                name="name"
                value={fields.name}
                onValue={(v) => set('name', v)}
                error={errors.name}
                placeholder="Quick question about the roadmap"
                required
              />
              <div class="form-grid">
                <SelectField
                  label="Type"
                  name="type"
                  value={fields.type}
                  onValue={(v) => set('type', v as TemplateFields['type'])}
                  options={TYPE_OPTIONS}
                  error={errors.type}
                  hint="First email, reply or follow-up"
                />
                <SelectField
                  label="Language"
                  name="language"
                  value={fields.language}
                  onValue={(v) => set('language', v)}
                  options={LANGUAGE_OPTIONS}
                  error={errors.language}
                />
              </div>
              <TextField
                label="Subject"
                name="subject"
                value={fields.subject}
                onValue={(v) => set('subject', v)}
                error={errors.subject}
                placeholder="{Quick|Short} question about {topic}"
                required
              />
              <TextAreaField
                label="Body"
                name="body"
                rows={12}
                value={fields.body}
                onValue={(v) => set('body', v)}
                error={errors.body}
                hint="{variable} inserts a value; {Hi|Hello|Hey} picks one option per email; {{ and }} are literal braces."
                placeholder={'{Hi|Hello} {recipient_first_name},\n\n...'}
                ref={bodyRef}
                required
              />
              <div class="insert-variables">
                <span class="mini-title" id="insert-label">
                  Insert a variable
                </span>
                <div class="chips" role="group" aria-labelledby="insert-label">
                  {KNOWN_VARIABLES.map((name) => (
                    <button key={name} type="button" class="chip chip-button" onClick={() => insertVariable(name)}>
                      {name}
                    </button>
                  ))}
                </div>
              </div>
            </Card>
            {failure !== undefined && <ErrorBox error={failure} title="The template was not saved" />}
            <div class="form-buttons">
              <Link to="/templates" class="btn btn-ghost">
                Cancel
              </Link>
              <Editable>
                <Button type="submit" variant="primary" loading={busy}>
                  {template ? 'Save changes' : 'Create template'}
                </Button>
              </Editable>
            </div>
          </form>
        )}
        <PreviewPanel subject={fields.subject} body={fields.body} seed={seed} onShuffle={() => setSeed(randomSeed())} />
      </div>
      {deleting && template && (
        <ConfirmDialog
          title="Delete this template?"
          confirmLabel="Delete template"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.deleteTemplate(template.id);
            toast(`${template.name} was deleted`);
            navigate('/templates', { replace: true });
          }}
        >
          <p>
            <strong>{template.name}</strong> will no longer be sent. Emails already sent keep their subject in the
            history.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

export function TemplateEditorPage({ id }: { id?: string }) {
  const loaded = useResource(() => (id ? api.template(id) : Promise.resolve(undefined)), [id]);
  useTitle(id ? (loaded.data?.name ?? 'Template') : 'New template');
  if (!id) return <Editor />;
  if (!loaded.data) {
    return (
      <RecordPending
        title="Template"
        noun="template"
        back={{ to: '/templates', label: 'Templates' }}
        error={loaded.error}
        onRetry={loaded.reload}
        loadingRows={6}
      />
    );
  }
  return <Editor key={loaded.data.id} template={loaded.data} />;
}
