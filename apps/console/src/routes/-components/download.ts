/** Saves `text` as a file named `name` through the browser's download (nothing leaves the page). */
export function downloadText(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // Give the download a moment to start before the object URL goes.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
