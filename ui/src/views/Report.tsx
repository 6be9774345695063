import { useEffect, useMemo, useState } from 'react';
import { api } from '../api';
import { chartGeometry, DEFAULT_BOX } from '../state/chart';
import { toApiError, type ApiError } from '../transport';
import { maybe, t, tn, type Key } from '../i18n';
import type { Graduation, ProposalsOutcome, ReportView, TimelineDay } from '../types';
import { ErrorBox, pct } from './common';

const colour = (i: number) => `var(--c${i % 8})`;

export function Chart({ timeline }: { timeline: TimelineDay[] }) {
  const g = useMemo(() => chartGeometry(timeline), [timeline]);
  const { x0, x1, y0, y1 } = g.plot;
  return (
    <figure style={{ margin: 0 }}>
      <svg className="chart" viewBox={`0 0 ${DEFAULT_BOX.width} ${DEFAULT_BOX.height}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">{t('chart.title')}</title>
        <desc id="chart-desc">
          {tn('chart.desc', g.days.length)}
        </desc>
        {g.rateTicks.map((k) => (
          <g key={`r${k.value}`}>
            <line className="axis" x1={x0} x2={x1} y1={k.y} y2={k.y} strokeDasharray={k.value === 0 ? undefined : '2 4'} />
            <text x={x0 - 6} y={k.y + 4} textAnchor="end">
              {Math.round(k.value * 100)}%
            </text>
          </g>
        ))}
        {g.countTicks.map((k) => (
          <text key={`c${k.value}`} x={x1 + 6} y={k.y + 4}>
            {k.value}
          </text>
        ))}
        {g.bars.map((b) => (
          <rect key={`${b.day}-${b.code}`} x={b.x} y={b.y} width={b.w} height={b.h} fill={colour(b.colour)} opacity={0.75}>
            <title>
              {b.day}: {b.code} × {b.count}
            </title>
          </rect>
        ))}
        <path className="l-fallback" d={g.fallback.path} />
        <path className="l-repair" d={g.repair.path} />
        {g.fallback.points.map((p) => (
          <circle key={`f${p.day}`} cx={p.x} cy={p.y} r={3.5} fill="var(--line-fallback)">
            <title>
              {t('chart.point.fallback', { day: p.day, value: pct(p.value) })}
            </title>
          </circle>
        ))}
        {g.repair.points.map((p) => (
          <circle key={`p${p.day}`} cx={p.x} cy={p.y} r={3.5} fill="var(--line-repair)">
            <title>
              {t('chart.point.repair', { day: p.day, value: pct(p.value) })}
            </title>
          </circle>
        ))}
        {g.days.map((d, i) =>
          i % g.labelEvery === 0 ? (
            <text key={d} x={g.xs[i]} y={y0 + 16} textAnchor="middle">
              {d.slice(5)}
            </text>
          ) : null,
        )}
        <line className="axis" x1={x0} x2={x1} y1={y0} y2={y0} />
        <line className="axis" x1={x0} x2={x0} y1={y1} y2={y0} />
        <line className="axis" x1={x1} x2={x1} y1={y1} y2={y0} />
        <text className="axis-title" data-axis="left" transform={`translate(14 ${(y0 + y1) / 2}) rotate(-90)`} textAnchor="middle">
          {t('chart.axis.left')}
        </text>
        <text className="axis-title" data-axis="right" transform={`translate(${DEFAULT_BOX.width - 10} ${(y0 + y1) / 2}) rotate(90)`} textAnchor="middle">
          {t('chart.axis.right')}
        </text>
      </svg>
      <figcaption className="legend">
        <span>
          <span className="swatch" style={{ background: 'var(--line-fallback)' }} />
          {t('chart.legend.fallback')}
        </span>
        <span>
          <span className="swatch" style={{ background: 'var(--line-repair)' }} />
          {t('chart.legend.repair')}
        </span>
        {g.codes.map((c) => (
          <span key={c.code}>
            <span className="swatch" style={{ background: colour(c.colour), opacity: 0.75 }} />
            {c.code} ({c.total})
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

function Histogram({ title, data }: { title: string; data: Record<string, number> }) {
  const rows = Object.entries(data).sort((a, b) => b[1] - a[1]);
  if (!rows.length) return null;
  return (
    <div>
      <h3>{title}</h3>
      <table className="list">
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <td className="mono">{k}</td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Seed 001's verdict on dropping the v1 fallback, with the numbers behind each criterion. */
export function GraduationView({ g }: { g: Graduation }) {
  return (
    <div className="panel" data-testid="graduation" data-verdict={g.verdict} style={{ marginTop: 12 }}>
      <h3>{t('report.graduation', { window: g.window })}</h3>
      <p className={g.verdict === 'graduate' ? 'add' : g.verdict === 'keep_fallback' ? 'del' : 'muted'}>
        <strong>{t(`report.verdict.${g.verdict}` as Key)}</strong>
      </p>
      <p className="muted">
        {t('report.counts', {
          calls: g.apply_calls,
          fallbacks: g.fallback_count,
          utf8: g.non_utf8_fallbacks,
          paf: g.patch_apply_failed,
          repaired: g.patch_apply_failed_repaired,
          pafFallbacks: g.patch_apply_failed_fallbacks,
        })}
      </p>
      <table className="list">
        <thead>
          <tr>
            <th>{t('report.met')}</th>
            <th>{t('report.criterion')}</th>
            <th>{t('report.measured')}</th>
          </tr>
        </thead>
        <tbody>
          {g.criteria.map((c) => (
            <tr key={c.id} data-criterion={c.id} data-met={c.met}>
              <td className={c.met ? 'add' : 'del'}>{c.met ? `✓ ${t('report.yes')}` : `✗ ${t('report.no')}`}</td>
              <td>{maybe(`criterion.${c.id}`) ?? c.required}</td>
              <td className="mono">{c.actual}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The model's weekly proposals, numbered, each with why and what to expect. */
export function ProposalsView({ p }: { p: ProposalsOutcome }) {
  return (
    <div data-testid="proposals">
      <p>
        <span className="muted">
          {t('report.proposals.by', { model: p.model })} {p.repaired ? t('report.proposals.repaired') : null}
        </span>
      </p>
      <p>{p.proposals.summary}</p>
      <ol>
        {p.proposals.proposals.map((x, i) => (
          <li key={i}>
            <span className="badge mono">{x.kind}</span> <strong>{x.title}</strong>
            <div>
              {t('report.proposals.why')}: {x.rationale}
            </div>
            {x.expected_impact && (
              <div className="muted">
                {t('report.proposals.expect')}: {x.expected_impact}
              </div>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function ReportPanel({ project }: { project: string }) {
  const [since, setSince] = useState('30d');
  const [data, setData] = useState<ReportView | null>(null);
  const [err, setErr] = useState<ApiError | null>(null);
  const [proposals, setProposals] = useState<ProposalsOutcome | null>(null);
  const [asking, setAsking] = useState(false);
  const [propErr, setPropErr] = useState<ApiError | null>(null);
  const askProposals = () => {
    setAsking(true);
    setPropErr(null);
    api.report(project, since || undefined, true).then(
      (d) => {
        setProposals(d.proposals ?? null);
        setAsking(false);
      },
      (e) => {
        setPropErr(toApiError(e));
        setAsking(false);
      },
    );
  };
  useEffect(() => {
    setData(null);
    setProposals(null);
    api.report(project, since || undefined).then(
      (d) => {
        setData(d);
        setErr(null);
      },
      (e) => setErr(toApiError(e)),
    );
  }, [project, since]);
  const r = data?.report;
  return (
    <section className="panel" aria-labelledby="rep-h">
      <div className="row">
        <h2 id="rep-h">{t('report.title')}</h2>
        <span className="spacer" />
        <label htmlFor="since">{t('report.window')}</label>
        <select id="since" value={since} onChange={(e) => setSince(e.target.value)}>
          <option value="1d">{t('report.day1')}</option>
          <option value="7d">{t('report.day7')}</option>
          <option value="30d">{t('report.day30')}</option>
          <option value="">{t('report.all')}</option>
        </select>
      </div>
      {err && <ErrorBox error={err} />}
      {!data && !err && <p className="muted">{t('common.loading')}</p>}
      {r && data && (
        <>
          <div className="cards">
            {(
              [
                [t('report.calls'), String(r.trace_count)],
                [t('report.plans.applies'), `${r.plan_count} / ${r.apply_count}`],
                [t('report.applied'), String(r.applied_count)],
                [t('report.fallback.rate'), pct(r.fallback_rate)],
                [t('report.fallback.rate.utf8'), pct(r.fallback_rate_excluding_non_utf8)],
                [t('report.repair.success'), `${pct(r.repair_success_rate)} (${r.repair_success_count}/${r.repair_count})`],
                [t('report.context'), `${r.context_avg_chars === null ? '—' : Math.round(r.context_avg_chars)} / ${r.context_p95_chars ?? '—'}`],
                [t('report.cache'), pct(r.cache_hit_rate)],
              ] as const
            ).map(([k, v]) => (
              <div className="card" key={k}>
                <div className="v">{v}</div>
                <div className="k">{k}</div>
              </div>
            ))}
          </div>
          {data.timeline.length === 0 ? <p className="muted">{t('report.no.traces')}</p> : <Chart timeline={data.timeline} />}
          {r.graduation && <GraduationView g={r.graduation} />}
          <div className="panel" style={{ marginTop: 12 }} aria-labelledby="prop-h">
            <div className="row">
              <h3 id="prop-h">{t('report.proposals')}</h3>
              <span className="spacer" />
              <button onClick={askProposals} disabled={asking}>
                {asking ? t('report.proposals.asking') : t('report.proposals.ask')}
              </button>
            </div>
            {propErr && <ErrorBox error={propErr} />}
            {proposals && <ProposalsView p={proposals} />}
          </div>
          <div className="grid2" style={{ marginTop: 12 }}>
            <Histogram title={t('report.error.codes')} data={r.error_codes} />
            <Histogram title={t('report.violation.codes')} data={r.violation_codes} />
            <Histogram title={t('report.fallback.reasons')} data={r.fallback_reasons} />
          </div>
          {r.unreadable_traces > 0 && <p className="muted">{t('report.unreadable', { count: r.unreadable_traces })}</p>}
        </>
      )}
    </section>
  );
}
