import { useState } from 'preact/hooks';
import { useIsAdmin } from '../access.js';
import { api, type Onboarding, type OnboardingStepId } from '../api.js';
import type { Resource } from '../hooks.js';
import { IconCheck } from './icons.js';
import { toast } from './toasts.js';
import { Button, Card, Link, errorMessage } from './ui.js';

/** Each step's wording and the page where it is done. */
const STEPS: Record<OnboardingStepId, { title: string; to: string }> = {
  mailboxes: { title: 'Connect mailboxes on two or more domains', to: '/mailboxes/new' },
  dns: { title: 'Fix DNS and blocklist problems', to: '/mailboxes' },
  team: { title: 'Invite your team', to: '/team' },
  alerts: { title: 'Set up an alert', to: '/alerts' },
};

/** Whether the list is up: some step still open and nobody has dismissed it. */
export function checklistShown(onboarding: Onboarding): boolean {
  return !onboarding.complete && !onboarding.dismissed;
}

/**
 * The overview's getting-started list, ticked by the server from the workspace's state. It goes
 * away when every step is done or an owner or admin dismisses it for the whole workspace; until the
 * server has answered, and if it cannot, it shows nothing: the figures below still matter.
 */
export function OnboardingChecklist({ onboarding }: { onboarding: Resource<Onboarding> }) {
  const canDismiss = useIsAdmin();
  const [dismissing, setDismissing] = useState(false);
  const data = onboarding.data;
  if (!data || !checklistShown(data)) return null;
  const shown: Onboarding = data;

  const done = data.steps.filter((step) => step.done).length;
  async function dismiss() {
    setDismissing(true);
    try {
      await api.updateWorkspaceSettings({ onboardingDismissed: true });
      onboarding.set({ ...shown, dismissed: true });
      toast('Checklist dismissed for everyone in this workspace');
    } catch (error) {
      toast(errorMessage(error), 'error');
    } finally {
      setDismissing(false);
    }
  }

  return (
    <Card
      title="Get started"
      subtitle={`${done} of ${data.steps.length} done: warmup works best once all four are`}
      class="onboarding-checklist"
      actions={
        canDismiss && (
          <Button variant="ghost" size="sm" loading={dismissing} onClick={dismiss}>
            Dismiss checklist
          </Button>
        )
      }
    >
      <ol class="checklist" data-testid="onboarding-checklist">
        {data.steps.map((step) => (
          <li key={step.id} class={`checklist-step ${step.done ? 'is-done' : ''}`} data-step={step.id}>
            <span class="checklist-mark" aria-hidden="true">
              {step.done ? <IconCheck size={16} /> : null}
            </span>
            <div>
              <Link to={STEPS[step.id].to} class="checklist-title">
                <span class="visually-hidden">{step.done ? 'Done: ' : 'To do: '}</span>
                {STEPS[step.id].title}
              </Link>
              <p class="checklist-detail">{step.detail}</p>
            </div>
          </li>
        ))}
      </ol>
    </Card>
  );
}
