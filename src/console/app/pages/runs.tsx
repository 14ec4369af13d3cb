// An agent's runs, newest first (one run in full: run.tsx).
import { useEffect, useState } from 'preact/hooks';
import { call, get, UNDER_WAY, type Agent, type Run, type RunListItem } from '../api.js';
import { PagedView, Table, type Column } from '../lists.js';
import { describeError, href, PageTitle, StatusBadge, Time, usePagedList } from '../ui.js';

const tokensOf = (run: RunListItem) => (run.usage ? run.usage.promptTokens + run.usage.completionTokens : undefined);

export function RunsPage({ agentId }: { agentId: string }) {
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  const runs = usePagedList<RunListItem>(`/agents/${encodeURIComponent(agentId)}/runs`, 25, setError);
  useEffect(() => {
    get<Agent>(`/agents/${encodeURIComponent(agentId)}`).then(setAgent, (failure) => setError(describeError(failure)));
  }, [agentId]);

  // Cancelled from the list: its row shows the run as the service now has it.
  async function cancel(run: RunListItem) {
    try {
      const cancelled = await call<Run>('POST', `/runs/${encodeURIComponent(run.id)}/cancel`);
      runs.setItems((shown) =>
        shown?.map((item) => (item.id === run.id ? { ...item, status: cancelled.status, error: cancelled.error } : item)),
      );
    } catch (failure) {
      setError(describeError(failure));
    }
  }

  const columns: Column<RunListItem>[] = [
    {
      label: 'Started',
      cell: (run) => (
        <a href={href(`/runs/${run.id}`)}>
          <Time value={run.startedAt} />
        </a>
      ),
    },
    {
      label: 'Status',
      cell: (run) => (
        <>
          <StatusBadge status={run.status} />
          {UNDER_WAY.includes(run.status) && (
            <button type="button" onClick={() => cancel(run)}>
              Cancel
            </button>
          )}
        </>
      ),
    },
    { label: 'Input', cell: (run) => run.input, class: 'clip' },
    { label: 'Time', cell: (run) => (run.ms === null ? '—' : `${(run.ms / 1000).toFixed(2)} s`) },
    { label: 'Tokens', cell: (run) => tokensOf(run) ?? '—' },
    { label: 'Steps', cell: (run) => run.steps.length },
  ];

  return (
    <section>
      <p class="crumbs">
        <a href={href('/agents')}>Agents</a> › <a href={href(`/agents/${agentId}`)}>{agent?.name ?? 'Agent'}</a>
      </p>
      <PageTitle>{agent ? `Runs of ${agent.name}` : 'Runs'}</PageTitle>
      <PagedView
        list={runs}
        error={error}
        more="Show older runs"
        empty={
          <>
            No runs yet. <a href={href(`/agents/${agentId}/chat`)}>Chat with the agent</a>: every message is a run.
          </>
        }
      >
        {(rows) => <Table rows={rows} columns={columns} />}
      </PagedView>
    </section>
  );
}
