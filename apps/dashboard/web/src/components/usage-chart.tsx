import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatCu, formatNumber } from '../format';
import type { UsageItem } from '../types';
import { Empty } from './ui';

/** CU per day as bars; the same numbers are in the tables for screen readers. */
export function UsageChart(props: { items: UsageItem[] }) {
  if (props.items.length === 0)
    return (
      <Empty title="No usage in this range yet.">
        Calls through your access tokens and webhook deliveries appear here within a few seconds.
      </Empty>
    );
  const data = props.items.map((item) => ({
    day: item.day?.slice(0, 10) ?? '',
    cu: item.cu,
    calls: item.calls,
  }));
  return (
    <figure className="chart" aria-label="Compute units per day">
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 8, right: 8, left: 8, bottom: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e5e7eb" />
          <XAxis dataKey="day" tick={{ fontSize: 12, fill: '#4b5563' }} />
          <YAxis
            tick={{ fontSize: 12, fill: '#4b5563' }}
            tickFormatter={(v: number) => formatNumber(v)}
            width={70}
          />
          <Tooltip formatter={(value) => formatCu(Number(value))} />
          <Bar
            dataKey="cu"
            name="CU"
            maxBarSize={56}
            fill="#4f46e5"
            radius={[4, 4, 0, 0]}
            isAnimationActive={false}
          />
        </BarChart>
      </ResponsiveContainer>
      <figcaption className="visually-hidden">
        {data.map((d) => `${d.day}: ${formatCu(d.cu)}`).join('; ')}
      </figcaption>
    </figure>
  );
}

export function UsageTable(props: { items: UsageItem[]; by: 'network' | 'method' }) {
  if (props.items.length === 0) return <p className="muted">Nothing yet.</p>;
  const rows = [...props.items].sort((a, b) => b.cu - a.cu);
  return (
    <table className="table" data-testid={`usage-by-${props.by}`}>
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
            <td>{item.network === 'webhooks' ? 'Webhook deliveries' : item.network}</td>
            {props.by === 'method' && <td>{item.method}</td>}
            <td className="num">{formatNumber(item.calls)}</td>
            <td className="num">{formatNumber(item.cu)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
