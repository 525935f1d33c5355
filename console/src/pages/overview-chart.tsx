/**
 * One time-series chart of the Overview, drawn by uPlot: a line per series over the range's data
 * points. It follows its container's width (a ResizeObserver), so it fits a phone as well as a
 * wide screen, and it carries a text summary for screen readers.
 */
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  color: string;
}

export interface ChartProps {
  title: string;
  /** Unix seconds of each data point. */
  times: number[];
  series: ChartSeries[];
  /** A value as the axis and the legend show it. */
  format: (v: number) => string;
  /** What a screen reader hears instead of the picture. */
  summary: string;
}

const HEIGHT = 180;

function options(props: ChartProps, width: number): uPlot.Options {
  const fmt = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : props.format(v));
  return {
    width,
    height: HEIGHT,
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
    axes: [
      { stroke: '#5b6475', grid: { stroke: '#eef0f4' }, ticks: { stroke: '#dde1e8' } },
      { stroke: '#5b6475', grid: { stroke: '#eef0f4' }, ticks: { stroke: '#dde1e8' }, size: 64, values: (_u, splits) => splits.map((v) => (v === 0 ? '0' : fmt(v))) },
    ],
    series: [
      {},
      ...props.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        fill: props.series.length === 1 ? `${s.color}1a` : undefined,
        // A lone point (one busy minute) still shows.
        points: { show: s.values.filter((v) => v !== null).length <= 2 },
        spanGaps: false,
        value: (_u: uPlot, v: number | null) => fmt(v),
      })),
    ],
  };
}

export function Chart(props: ChartProps): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const data: uPlot.AlignedData = [props.times, ...props.series.map((s) => s.values)];
    const plot = new uPlot(options(props, Math.max(200, el.clientWidth)), data, el);
    const observer = new ResizeObserver(() => {
      const width = Math.max(200, el.clientWidth);
      if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.times, props.series]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="chart-box" ref={box} role="img" aria-label={`${props.title}: ${props.summary}`} />
    </figure>
  );
}
