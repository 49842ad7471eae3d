import { useState } from 'react';

/**
 * Loads an event file (the JSON `npm run onsale -- event:create --file` takes) into the form, from a file or pasted.
 * The form then shows what the schema finds wrong with it, at each field.
 */
export function ImportEventFile({ onLoad, disabled }: { onLoad: (file: unknown, source: string) => void; disabled?: boolean }) {
  const [pasted, setPasted] = useState('');
  const [error, setError] = useState<string | null>(null);

  function load(textValue: string, source: string) {
    try {
      const value: unknown = JSON.parse(textValue);
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('an event file is one JSON object');
      setError(null);
      onLoad(value, source);
    } catch (e) {
      setError(`${source} is not an event file: ${(e as Error).message}`);
    }
  }

  return (
    <details className="card" data-testid="import-event-file">
      <summary>Import an event file (the JSON the CLI takes)</summary>
      <div className="import">
        <label>
          From a file{' '}
          <input
            type="file"
            accept="application/json,.json"
            disabled={disabled}
            data-testid="import-file"
            onChange={async (e) => {
              const f = e.target.files?.[0];
              if (f) load(await f.text(), f.name);
              e.target.value = '';
            }}
          />
        </label>
        <div style={{ flex: '1 1 320px' }}>
          <label htmlFor="import-json">Or paste it</label>
          <textarea
            id="import-json"
            value={pasted}
            disabled={disabled}
            onChange={(e) => setPasted(e.target.value)}
            data-testid="import-json"
          />
          <button
            type="button"
            className="secondary"
            disabled={disabled || pasted.trim() === ''}
            onClick={() => load(pasted, 'The pasted text')}
          >
            Load into the form
          </button>
        </div>
      </div>
      {error && (
        <p className="form-error" role="alert" data-testid="import-error">
          {error}
        </p>
      )}
    </details>
  );
}
