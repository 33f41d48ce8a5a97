import { EmptyState, Link } from '../components/ui.js';
import { useTitle } from '../hooks.js';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <EmptyState
      title="This page does not exist"
      action={
        <Link to="/" class="btn btn-primary">
          Go to the overview
        </Link>
      }
    >
      The address may be mistyped, or the item was deleted.
    </EmptyState>
  );
}
