// Deleting a record from the console: asked once more, then DELETE, then what the page does next.
import { call } from './api.js';
import { ConfirmButton, describeError } from './ui.js';

/**
 * A button that, once confirmed, deletes the record at `path` (an API path) and then runs `then`
 * (back to the list, or read it again); a failure of either goes to `onError`, described.
 */
export function DeleteButton(props: {
  path: string;
  question: string;
  label?: string;
  then: () => Promise<void> | void;
  onError: (message: string) => void;
}) {
  const { path, question, label = 'Delete', then, onError } = props;
  async function remove() {
    try {
      await call('DELETE', path);
      await then();
    } catch (failure) {
      onError(describeError(failure));
    }
  }
  return <ConfirmButton label={label} question={question} onConfirm={remove} />;
}
