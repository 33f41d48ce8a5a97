import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { MailboxStatus, Pagination, WarmupState } from '../api.js';
import { ApiError } from '../api.js';
import { countNoun } from '../format.js';
import { linkClick } from '../router.js';
import { IconAlert, IconBack, IconRefresh } from './icons.js';

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'icon' | 'size' | 'type'> & {
  variant?: 'primary' | 'secondary' | 'ghost' | 'danger' | 'danger-ghost';
  size?: 'sm' | 'md';
  loading?: boolean;
  icon?: ComponentChildren;
  type?: 'button' | 'submit';
  disabled?: boolean;
  /**
   * Not available now, but keeps the keyboard focus: for a button that becomes unavailable by
   * being pressed (Next on reaching the last page), where `disabled` would drop the focus.
   */
  unavailable?: boolean;
};

export function Button({
  variant = 'secondary',
  size = 'md',
  loading,
  icon,
  children,
  class: className,
  disabled,
  unavailable,
  type = 'button',
  onClick,
  ...rest
}: ButtonProps) {
  // A busy button is aria-disabled, not disabled: a disabled button loses the keyboard focus,
  // which then falls to <body> and the user has to find their place again.
  return (
    <button
      {...rest}
      type={type}
      class={['btn', `btn-${variant}`, size === 'sm' ? 'btn-sm' : '', className ?? ''].filter(Boolean).join(' ')}
      disabled={disabled}
      aria-disabled={loading || unavailable ? 'true' : undefined}
      aria-busy={loading ? 'true' : undefined}
      onClick={(event) => {
        if (loading || unavailable) {
          event.preventDefault();
          return;
        }
        onClick?.call(event.currentTarget, event);
      }}
    >
      {loading ? <Spinner /> : icon}
      {children && <span>{children}</span>}
    </button>
  );
}

export function Link({
  to,
  children,
  class: className,
  ...aria
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
  'aria-current'?: 'page';
}) {
  return (
    <a {...aria} href={to} class={className} onClick={(event) => linkClick(event as unknown as MouseEvent, to)}>
      {children}
    </a>
  );
}

export function Spinner({ label }: { label?: string }) {
  return <span class="spinner" role={label ? 'status' : undefined} aria-label={label} />;
}

export function Skeleton({ height = 16, width }: { height?: number; width?: string }) {
  return <span class="skeleton" style={{ height: `${height}px`, width: width ?? '100%' }} aria-hidden="true" />;
}

/** A loading block that says so to screen readers. */
export function Loading({ label = 'Loading', rows = 3 }: { label?: string; rows?: number }) {
  return (
    <div class="loading-block" role="status" aria-live="polite">
      <span class="visually-hidden">{label}…</span>
      {Array.from({ length: rows }, (_, i) => (
        <Skeleton key={i} height={14} width={`${90 - i * 17}%`} />
      ))}
    </div>
  );
}

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError && error.failures.length > 0) {
    // IMAP and SMTP refused for the same reason have one fix: it is said once, not once per server
    const fixes = [...new Set(error.failures.map((failure) => failure.fix))];
    return fixes
      .map((fix) => {
        const titles = new Set(error.failures.filter((f) => f.fix === fix).map((f) => f.title));
        return `${[...titles].join('; ')}: ${fix}`;
      })
      .join(' ');
  }
  if (error instanceof ApiError || error instanceof Error) return error.message;
  return String(error);
}

/**
 * A failed login check: the problem as the headline (not always "refused the login"), the one fix
 * per server, and what the server said underneath.
 */
function ConnectionFailureBody({ error }: { error: ApiError }) {
  const { failures } = error;
  const sameProblem = failures.every((failure) => failure.problem === failures[0]!.problem);
  const headline = !sameProblem
    ? 'IMAP and SMTP both failed'
    : failures.length > 1
      ? failures[0]!.title.replace(/^(IMAP|SMTP) server /, 'IMAP and SMTP servers ')
      : failures[0]!.title;
  return (
    <div class="alert-body">
      <strong>{headline}</strong>
      <ul class="failure-fixes">
        {failures.map((failure) => (
          <li key={failure.side}>
            {failures.length > 1 && <span class="failure-side">{failure.side.toUpperCase()}: </span>}
            {!sameProblem && <>{failure.title}. </>}
            {failure.fix}
          </li>
        ))}
      </ul>
      <p class="failure-detail">{error.message}</p>
    </div>
  );
}

/** An error in place, announced to screen readers, with a retry where one makes sense. */
export function ErrorBox({
  error,
  onRetry,
  title = 'Something went wrong',
}: {
  error: unknown;
  onRetry?: () => void;
  title?: string;
}) {
  return (
    <div class="alert alert-error" role="alert">
      <IconAlert size={18} class="alert-icon" />
      {error instanceof ApiError && error.failures.length > 0 ? (
        <ConnectionFailureBody error={error} />
      ) : (
        <div class="alert-body">
          <strong>{title}</strong>
          <p>{errorMessage(error)}</p>
        </div>
      )}
      {onRetry && (
        <Button size="sm" variant="ghost" icon={<IconRefresh size={16} />} onClick={onRetry}>
          Retry
        </Button>
      )}
    </div>
  );
}

export function Notice({
  tone = 'info',
  title,
  children,
}: {
  tone?: 'info' | 'warning' | 'error' | 'success';
  title?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={`alert alert-${tone}`} role={tone === 'error' ? 'alert' : undefined}>
      {tone !== 'info' && <IconAlert size={18} class="alert-icon" />}
      <div class="alert-body">
        {title && <strong>{title}</strong>}
        <div>{children}</div>
      </div>
    </div>
  );
}

export function EmptyState({
  icon,
  title,
  children,
  action,
  level = 3,
}: {
  icon?: ComponentChildren;
  title: string;
  children?: ComponentChildren;
  action?: ComponentChildren;
  /** 2 where nothing but the page's h1 comes before it, so headings go down one level at a time. */
  level?: 2 | 3;
}) {
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <div class="empty">
      {icon && <div class="empty-icon">{icon}</div>}
      <Heading>{title}</Heading>
      {children && <p>{children}</p>}
      {action && <div class="empty-action">{action}</div>}
    </div>
  );
}

export function Card({
  title,
  subtitle,
  actions,
  children,
  class: className,
  bodyClass,
  id,
}: {
  title?: ComponentChildren;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  class?: string;
  bodyClass?: string;
  id?: string;
}) {
  const headingId = useId();
  return (
    <section class={`card ${className ?? ''}`} aria-labelledby={title ? headingId : undefined} id={id}>
      {(title || actions) && (
        <header class="card-header">
          <div>
            {title && (
              <h2 class="card-title" id={headingId}>
                {title}
              </h2>
            )}
            {subtitle && <p class="card-subtitle">{subtitle}</p>}
          </div>
          {actions && <div class="card-actions">{actions}</div>}
        </header>
      )}
      <div class={`card-body ${bodyClass ?? ''}`}>{children}</div>
    </section>
  );
}

export function PageHeader({
  title,
  subtitle,
  actions,
  back,
}: {
  title: ComponentChildren;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
  back?: { to: string; label: string };
}) {
  return (
    <header class="page-header">
      <div class="page-heading">
        {back && (
          <Link to={back.to} class="back-link">
            <IconBack size={16} /> {back.label}
          </Link>
        )}
        <h1>{title}</h1>
        {subtitle && <p class="page-subtitle">{subtitle}</p>}
      </div>
      {actions && <div class="page-actions">{actions}</div>}
    </header>
  );
}

/**
 * The page of one record (a mailbox, a template) while it cannot be shown: not found (a 404, most
 * likely deleted), failed to load (with a retry), or still loading.
 */
export function RecordPending({
  title,
  noun,
  back,
  error,
  onRetry,
  loadingRows,
}: {
  title: string;
  /** What the record is, lower case: "mailbox". */
  noun: string;
  back: { to: string; label: string };
  error: Error | undefined;
  onRetry: () => void;
  loadingRows: number;
}) {
  const missing = error instanceof ApiError && error.status === 404;
  return (
    <>
      <PageHeader title={title} back={back} />
      {missing ? (
        <EmptyState
          title={`This ${noun} does not exist`}
          action={
            <Link to={back.to} class="btn btn-primary">
              Back to {back.label.toLowerCase()}
            </Link>
          }
        >
          It may have been deleted.
        </EmptyState>
      ) : error ? (
        <ErrorBox error={error} onRetry={onRetry} title={`Could not load the ${noun}`} />
      ) : (
        <Loading label={`Loading the ${noun}`} rows={loadingRows} />
      )}
    </>
  );
}

export function StatCard({
  label,
  value,
  hint,
  tone,
  loading,
}: {
  label: string;
  value: ComponentChildren;
  hint?: ComponentChildren;
  tone?: 'good' | 'building' | 'warn' | 'bad';
  loading?: boolean;
}) {
  return (
    <div class="stat">
      <div class="stat-label">{label}</div>
      <div class={`stat-value ${tone ? `tone-${tone}` : ''}`}>
        {loading ? <Skeleton height={28} width="60%" /> : value}
      </div>
      {hint !== undefined && <div class="stat-hint">{loading ? <Skeleton height={12} width="80%" /> : hint}</div>}
    </div>
  );
}

const STATUS_LABEL: Record<MailboxStatus, string> = {
  active: 'Warming up',
  paused: 'Paused',
  error: 'Needs attention',
};

export function StatusBadge({ status }: { status: MailboxStatus }) {
  return (
    <span class={`badge badge-status badge-${status}`}>
      <span class="dot" aria-hidden="true" />
      {STATUS_LABEL[status] ?? status}
    </span>
  );
}

const STATE_BADGE: Record<WarmupState['tone'], string> = {
  good: 'badge-active',
  neutral: 'badge-paused',
  warn: 'badge-amber',
  bad: 'badge-error',
};

/** A mailbox's state as the server defines it (outlook.state): its label in its tone, nothing decided here. */
export function StateBadge({ state }: { state: WarmupState }) {
  return (
    <span class={`badge badge-status ${STATE_BADGE[state.tone]}`} data-state={state.kind}>
      <span class="dot" aria-hidden="true" />
      {state.label}
    </span>
  );
}

export function Badge({
  children,
  tone = 'neutral',
}: {
  children: ComponentChildren;
  tone?: 'neutral' | 'blue' | 'green' | 'red' | 'amber' | 'violet';
}) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

/**
 * 80–100 good, 50–79 building up (where every new mailbox starts: not a warning), under 50 at risk.
 * REPUTATION_LEGEND says the same in words next to every coloured score.
 */
export function reputationTone(score: number): 'good' | 'building' | 'bad' {
  if (score >= 80) return 'good';
  if (score >= 50) return 'building';
  return 'bad';
}

export const REPUTATION_LEGEND =
  'Reputation: 80–100 good · 50–79 building up (new mailboxes start at 50) · under 50 at risk';

/** The colours of reputation scores, in words. */
export function ReputationLegend() {
  return (
    <p class="reputation-legend">
      <span class="legend-item">
        <span class="swatch tone-bg-good" /> 80–100 good
      </span>
      <span class="legend-item">
        <span class="swatch tone-bg-building" /> 50–79 building up (new mailboxes start at 50)
      </span>
      <span class="legend-item">
        <span class="swatch tone-bg-bad" /> under 50 at risk
      </span>
    </p>
  );
}

export function ReputationMeter({ score }: { score: number }) {
  const tone = reputationTone(score);
  return (
    <span class="reputation" title={`Reputation ${score} of 100. ${REPUTATION_LEGEND}`}>
      <span class={`reputation-score tone-${tone}`}>{score}</span>
      <span class="meter" aria-hidden="true">
        <span class={`meter-fill fill-${tone}`} style={{ width: `${Math.max(0, Math.min(100, score))}%` }} />
      </span>
    </span>
  );
}

export function Progress({ value, max, label }: { value: number; max: number; label: string }) {
  const percent = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0;
  return (
    <span
      class="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
    >
      <span class="progress-fill" style={{ width: `${percent}%` }} />
    </span>
  );
}

/** A group of mutually exclusive choices (period pickers, filters), keyboard-operable as radios. */
export function Segmented<T extends string>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: Array<{ value: T; label: string }>;
  value: T;
  onChange: (value: T) => void;
}) {
  const name = useId();
  return (
    <div class="segmented" role="radiogroup" aria-label={label}>
      {options.map((option) => (
        <label key={option.value} class={option.value === value ? 'selected' : ''}>
          <input
            type="radio"
            name={name}
            value={option.value}
            checked={option.value === value}
            onChange={() => onChange(option.value)}
          />
          <span>{option.label}</span>
        </label>
      ))}
    </div>
  );
}

export function PaginationBar({
  pagination,
  onPage,
  noun,
}: {
  pagination: Pagination;
  onPage: (page: number) => void;
  noun: string;
}) {
  if (pagination.total === 0) return null;
  const first = (pagination.page - 1) * pagination.limit + 1;
  const last = Math.min(pagination.total, pagination.page * pagination.limit);
  return (
    <nav class="pagination" aria-label={`${noun} pages`}>
      <span class="pagination-info">
        {first}–{last} of {countNoun(pagination.total, noun)}
      </span>
      {pagination.totalPages > 1 && (
        <div class="pagination-buttons">
          <Button size="sm" unavailable={pagination.page <= 1} onClick={() => onPage(pagination.page - 1)}>
            Previous
          </Button>
          <Button
            size="sm"
            unavailable={pagination.page >= pagination.totalPages}
            onClick={() => onPage(pagination.page + 1)}
          >
            Next
          </Button>
        </div>
      )}
    </nav>
  );
}
