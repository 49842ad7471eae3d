import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Section } from './SectionTable';

// Same colours as the totals tiles, so a glance ties the chart to the numbers.
const COLORS = { available: '#2f855a', held: '#c05621', sold: '#2b6cb0' } as const;

export function SectionChart({ sections }: { sections: Section[] }) {
  return (
    <figure className="chart" aria-label="Seats per section">
      <ResponsiveContainer width="100%" height={260}>
        <BarChart data={sections} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="code" />
          <YAxis allowDecimals={false} width={48} />
          <Tooltip />
          <Legend />
          <Bar dataKey="available" name="Available" stackId="seats" fill={COLORS.available} isAnimationActive={false} />
          <Bar dataKey="held" name="Held" stackId="seats" fill={COLORS.held} isAnimationActive={false} />
          <Bar dataKey="sold" name="Sold" stackId="seats" fill={COLORS.sold} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
