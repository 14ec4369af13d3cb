// An agent's runs, newest first (one run in full: run.tsx).
import { useEffect, useState } from 'preact/hooks';
import { call, get, UNDER_WAY, type Agent, type Run, type RunListItem } from '../api.js';
import { describeError, Empty, ErrorNotice, href, Loading, PageTitle, StatusBadge, Time, usePagedList } from '../ui.js';

const tokensOf = (run: RunListItem) => (run.usage ? run.usage.promptTokens + run.usage.completionTokens : undefined);

export function RunsPage({ agentId }: { agentId: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  const { items: runs, setItems, next, load } = usePagedList<RunListItem>(`/agents/${encodeURIComponent(agentId)}/runs`, 25, setError);
  useEffect(() => {
    get<Agent>(`/agents/${encodeURIComponent(agentId)}`).then(setAgent, (failure) => setError(describeError(failure)));
  }, [agentId]);

  // Cancelled from the list: its row shows the run as the service now has it.
  async function cancel(run: RunListItem) {
    try {
      const cancelled = await call<Run>('POST', `/runs/${encodeURIComponent(run.id)}/cancel`);
      setItems((shown) =>
        shown?.map((item) => (item.id === run.id ? { ...item, status: cancelled.status, error: cancelled.error } : item)),
      );
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${agentId}`)}>{agent?.name ?? 'Agent'}</a>
      </p>
      <PageTitle>{agent ? `Runs of ${agent.name}` : 'Runs'}</PageTitle>
      <ErrorNotice error={error} />
      {!runs ? (
        !error && <Loading />
      ) : runs.length === 0 ? (
        <Empty>
          No runs yet. <a href={href(`/agents/${agentId}/chat`)}>Chat with the agent</a>: every message is a run.
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Status</th>
                <th scope="col">Input</th>
                <th scope="col">Time</th>
                <th scope="col">Tokens</th>
                <th scope="col">Steps</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.id}>
                  <td data-label="Started">
                    <a href={href(`/runs/${run.id}`)}>
                      <Time value={run.startedAt} />
                    </a>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={run.status} />
                    {UNDER_WAY.includes(run.status) && (
                      <button type="button" onClick={() => cancel(run)}>
                        Cancel
                      </button>
                    )}
                  </td>
                  <td data-label="Input" class="clip">
                    {run.input}
                  </td>
                  <td data-label="Time">{run.ms === null ? '—' : `${(run.ms / 1000).toFixed(2)} s`}</td>
                  <td data-label="Tokens">{tokensOf(run) ?? '—'}</td>
                  <td data-label="Steps">{run.steps.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Show older runs
        </button>
      )}
    </section>
  );
}
