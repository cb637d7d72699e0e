/**
 * The project bar (console served by `svc console` for a project directory): which directory
 * changes are recorded into, and what the last changes wrote (newest first) — the migration (up.sql, down.sql)
 * and the metadata files that changed.
 */
import { useEffect, useState, useSyncExternalStore } from 'react';
import { lastRecordings, project, subscribeRecording, type ProjectInfo } from './api';

export function useProject(): ProjectInfo | null | undefined {
  const [p, setP] = useState<ProjectInfo | null>();
  useEffect(() => {
    let live = true;
    void project().then((x) => live && setP(x));
    return () => {
      live = false;
    };
  }, []);
  return p;
}

export function ProjectBar() {
  const p = useProject();
  const recs = useSyncExternalStore(subscribeRecording, lastRecordings);
  if (!p) return null;
  return (
    <section className="project-bar" aria-label="Project">
      <span>Project <code>{p.directory}</code>: schema changes are written as migrations, metadata changes into <code>{p.metadata_directory.replace(`${p.directory}/`, '')}/</code>.</span>
      <ul role="status" aria-live="polite" aria-label="Recorded" className="recorded">
        {recs.map((rec) => (
          <li key={rec.at}>
            {rec.migration ? <>Wrote migration <code>{rec.migration.id}</code> ({rec.migration.files.map((f) => f.split('/').pop()).join(', ')})</> : 'No migration written'}
            {rec.metadata_files.length ? <>; metadata: {rec.metadata_files.map((f) => f.split('/').pop()).join(', ')}</> : '; metadata files unchanged'}.
          </li>
        ))}
      </ul>
    </section>
  );
}
