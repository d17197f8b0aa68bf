import { Fragment } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { formatCu, formatNumber, networkLabel } from '../format';
import type { UsageItem } from '../types';
import { noUsageYetWords } from '../usage-window';
import { Empty } from './ui';

/** Bar colours by position (networks sorted by CU); 4.5:1 or better against white. */
const COLORS = [
  '#4f46e5',
  '#0f766e',
  '#b45309',
  '#be123c',
  '#1d4ed8',
  '#6d28d9',
  '#15803d',
  '#475569',
];

/**
 * CU per day, one bar per day stacked by network (billing's `group_by=day_network`; webhook
 * deliveries are the network `webhooks`). The drawing is for the eye only: recharts'
 * accessibility layer made it a tab stop (role application) named by its axis labels run
 * together (QA), so it is off and the drawing hidden from assistive technology; the figure
 * keeps its short name, and its caption and the tables below give the numbers.
 */
export function UsageChart(props: { items: UsageItem[]; viewer: 'customer' | 'operator' }) {
  if (props.items.length === 0)
    return <Empty title="No usage in this range yet.">{noUsageYetWords(props.viewer)}</Empty>;
  const totals = new Map<string, number>();
  for (const item of props.items)
    totals.set(item.network ?? '', (totals.get(item.network ?? '') ?? 0) + item.cu);
  const networks = [...totals.keys()].sort(
    (a, b) => totals.get(b)! - totals.get(a)! || a.localeCompare(b),
  );
  const byDay = new Map<string, Record<string, number | string>>();
  for (const item of props.items) {
    const day = item.day?.slice(0, 10) ?? '';
    const row = byDay.get(day) ?? { day };
    row[item.network ?? ''] = item.cu;
    byDay.set(day, row);
  }
  const data = [...byDay.values()].sort((a, b) => String(a['day']).localeCompare(String(b['day'])));
  return (
    <figure className="chart" aria-label="Compute units per day by network">
      <div aria-hidden="true">
        <ResponsiveContainer width="100%" height={260}>
          <BarChart
            data={data}
            margin={{ top: 8, right: 8, left: 8, bottom: 0 }}
            accessibilityLayer={false}
          >
            <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e5e7eb" />
            <XAxis dataKey="day" tick={{ fontSize: 12, fill: '#4b5563' }} />
            <YAxis
              tick={{ fontSize: 12, fill: '#4b5563' }}
              tickFormatter={(v: number) => formatNumber(v)}
              width={70}
            />
            <Tooltip formatter={(value, name) => [formatCu(Number(value)), name]} />
            <Legend wrapperStyle={{ fontSize: 13, color: '#374151' }} />
            {networks.map((network, i) => (
              <Bar
                key={network}
                dataKey={network}
                name={networkLabel(network)}
                stackId="cu"
                maxBarSize={56}
                fill={COLORS[i % COLORS.length]}
                isAnimationActive={false}
              />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="visually-hidden" data-testid="usage-chart-caption">
        {data
          .map(
            (row) =>
              `${String(row['day'])}: ${networks
                .filter((n) => row[n] !== undefined)
                .map((n) => `${networkLabel(n)} ${formatCu(Number(row[n]))}`)
                .join(', ')}`,
          )
          .join('; ')}
      </figcaption>
    </figure>
  );
}

/**
 * A method's name as code, which may break to fit (styles.css), first after its namespace's
 * underscore (`suix_` / `getLatestSuiSystemState`; QA: broken mid-word as plain text).
 */
function MethodName(props: { method: string }) {
  const parts = props.method.split(/(?<=_)/);
  return (
    <code className="method-name">
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </code>
  );
}

/** Usage by network or by method; its caption names it (QA: the Overview's had no name). */
export function UsageTable(props: { items: UsageItem[]; by: 'network' | 'method' }) {
  if (props.items.length === 0) return <p className="muted">Nothing yet.</p>;
  const rows = [...props.items].sort((a, b) => b.cu - a.cu);
  return (
    // By method has four columns: at phone width each row becomes a card (`table-stack`).
    <table
      className={props.by === 'method' ? 'table table-stack' : 'table'}
      data-testid={`usage-by-${props.by}`}
    >
      <caption className="visually-hidden">Usage by {props.by}</caption>
      <thead>
        <tr>
          <th scope="col">Network</th>
          {props.by === 'method' && <th scope="col">Method</th>}
          <th scope="col" className="num">
            Calls
          </th>
          <th scope="col" className="num">
            CU
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((item) => (
          <tr key={`${item.network}/${item.method ?? ''}`}>
            <td data-label="Network">{networkLabel(item.network)}</td>
            {props.by === 'method' && (
              <td data-label="Method">
                <MethodName method={item.method ?? ''} />
              </td>
            )}
            <td className="num" data-label="Calls">
              {formatNumber(item.calls)}
            </td>
            <td className="num" data-label="CU">
              {formatNumber(item.cu)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
