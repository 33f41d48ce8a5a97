// Form fields: a label bound to its control, a hint, and an error announced next to it; and the
// search box and filter menus above a list.
import type { ComponentChildren, InputHTMLAttributes, Ref } from 'preact';
import { useId } from 'preact/hooks';
import { IconSearch } from './icons.js';

interface FieldShell {
  label: ComponentChildren;
  error?: string;
  hint?: ComponentChildren;
  class?: string;
}

function FieldFrame({
  id,
  label,
  error,
  hint,
  class: className,
  children,
}: FieldShell & { id: string; children: ComponentChildren }) {
  return (
    <div class={`field ${error ? 'has-error' : ''} ${className ?? ''}`}>
      <label for={id}>{label}</label>
      {children}
      {hint && !error && (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function describedBy(id: string, error?: string, hint?: ComponentChildren): string | undefined {
  if (error) return `${id}-error`;
  if (hint) return `${id}-hint`;
  return undefined;
}

/** The input attributes the dashboard's forms use. */
interface InputAttributes {
  id?: string;
  name?: string;
  type?: 'text' | 'email' | 'password' | 'number' | 'time' | 'date' | 'search';
  placeholder?: string;
  autoComplete?: string;
  spellcheck?: boolean;
  inputMode?: 'numeric' | 'text' | 'email';
  min?: number | string;
  max?: number | string;
  required?: boolean;
  autoFocus?: boolean;
}

type InputProps = FieldShell &
  InputAttributes & {
    value: string | number;
    onValue: (value: string) => void;
  };

export function TextField({ label, error, hint, class: className, value, onValue, id: givenId, ...input }: InputProps) {
  const generated = useId();
  const id = givenId ?? generated;
  // Preact types `type` and `role` as a discriminated union; these are plain text-like inputs.
  const attributes = {
    ...input,
    id,
    class: 'input',
    value,
    'aria-invalid': error ? 'true' : undefined,
    'aria-describedby': describedBy(id, error, hint),
    onInput: (event: Event) => onValue((event.currentTarget as HTMLInputElement).value),
  } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <FieldFrame id={id} label={label} error={error} hint={hint} class={className}>
      <input {...attributes} />
    </FieldFrame>
  );
}

type TextAreaProps = FieldShell & {
  id?: string;
  name?: string;
  rows?: number;
  placeholder?: string;
  required?: boolean;
  value: string;
  onValue: (value: string) => void;
  ref?: Ref<HTMLTextAreaElement>;
};

export function TextAreaField({
  label,
  error,
  hint,
  class: className,
  value,
  onValue,
  id: givenId,
  ...input
}: TextAreaProps) {
  const generated = useId();
  const id = givenId ?? generated;
  return (
    <FieldFrame id={id} label={label} error={error} hint={hint} class={className}>
      <textarea
        {...input}
        id={id}
        class="input textarea"
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(id, error, hint)}
        onInput={(event) => onValue((event.currentTarget as HTMLTextAreaElement).value)}
      />
    </FieldFrame>
  );
}

interface SelectControlProps {
  id: string;
  value: string;
  onValue: (value: string) => void;
  options: Array<{ value: string; label: string }>;
  name?: string;
  disabled?: boolean;
  'aria-invalid'?: 'true';
  'aria-describedby'?: string;
}

/** The select element of both the form field and the filter bar; reports the chosen value. */
function SelectControl({ value, onValue, options, ...attributes }: SelectControlProps) {
  return (
    <select
      {...attributes}
      class="input select"
      value={value}
      onChange={(event) => onValue((event.currentTarget as HTMLSelectElement).value)}
    >
      {options.map((option) => (
        <option key={option.value} value={option.value}>
          {option.label}
        </option>
      ))}
    </select>
  );
}

type SelectProps = FieldShell & Omit<SelectControlProps, 'id' | 'aria-invalid' | 'aria-describedby'> & { id?: string };

export function SelectField({
  label,
  error,
  hint,
  class: className,
  value,
  onValue,
  options,
  id: givenId,
  name,
  disabled,
}: SelectProps) {
  const generated = useId();
  const id = givenId ?? generated;
  return (
    <FieldFrame id={id} label={label} error={error} hint={hint} class={className}>
      <SelectControl
        id={id}
        name={name}
        value={value}
        onValue={onValue}
        options={options}
        disabled={disabled}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(id, error, hint)}
      />
    </FieldFrame>
  );
}

export function CheckboxField({
  label,
  hint,
  checked,
  onChecked,
  name,
  id: givenId,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  checked: boolean;
  onChecked: (checked: boolean) => void;
  name?: string;
  id?: string;
}) {
  const generated = useId();
  const id = givenId ?? generated;
  return (
    <div class="checkbox-field">
      <input
        type="checkbox"
        id={id}
        name={name}
        checked={checked}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(event) => onChecked((event.currentTarget as HTMLInputElement).checked)}
      />
      <div>
        <label for={id}>{label}</label>
        {hint && (
          <p class="field-hint" id={`${id}-hint`}>
            {hint}
          </p>
        )}
      </div>
    </div>
  );
}

/** The search box of a filter bar (the label is visually hidden); every keystroke reports the text. */
export function SearchInput({
  id,
  label,
  placeholder,
  value,
  onValue,
}: {
  id: string;
  label: string;
  placeholder: string;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <div class="search">
      <IconSearch size={16} class="search-icon" />
      <label for={id} class="visually-hidden">
        {label}
      </label>
      <input
        id={id}
        class="input"
        type="search"
        placeholder={placeholder}
        value={value}
        onInput={(event) => onValue((event.currentTarget as HTMLInputElement).value)}
      />
    </div>
  );
}

/** A compact labelled select for filter bars (the label is visually hidden). */
export function FilterSelect({
  label,
  value,
  onValue,
  options,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  options: Array<{ value: string; label: string }>;
}) {
  const id = useId();
  return (
    <div class="filter">
      <label for={id} class="visually-hidden">
        {label}
      </label>
      <SelectControl id={id} value={value} onValue={onValue} options={options} />
    </div>
  );
}
