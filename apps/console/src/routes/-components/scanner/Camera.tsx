import { useEffect, useRef, useState } from 'react';

interface Detector {
  detect(source: HTMLVideoElement): Promise<{ rawValue: string }[]>;
}
type DetectorClass = new (opts: { formats: string[] }) => Detector;

/** Whether this browser can open a camera at all (a gate's laptop may not). */
export const hasCamera = () => typeof navigator !== 'undefined' && !!navigator.mediaDevices?.getUserMedia;

/**
 * The camera at the door: the back camera's video, read a few times a second with the browser's BarcodeDetector
 * where it has one (Chrome on Android and macOS, Safari) and with the qr library's decoder otherwise. The same code
 * seen again within three seconds is one scan, not a double entry.
 */
export function Camera({ onCode, onError }: { onCode: (code: string) => void; onError: (message: string) => void }) {
  const video = useRef<HTMLVideoElement>(null);
  const [reader, setReader] = useState<string>('');
  const onCodeRef = useRef(onCode);
  onCodeRef.current = onCode;

  useEffect(() => {
    let stream: MediaStream | null = null;
    let timer: ReturnType<typeof setInterval> | undefined;
    let stopped = false;
    const last = { code: '', at: 0 };
    void (async () => {
      try {
        stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
      } catch (e) {
        onError(`The camera could not be opened (${(e as Error).message}). Type or paste the code instead.`);
        return;
      }
      if (stopped) return stream.getTracks().forEach((t) => t.stop());
      const v = video.current!;
      v.srcObject = stream;
      // Ignored on purpose: a play() the browser refuses leaves no frame to read, so no code is found, and the operator
      // types or pastes the code instead, as when the camera cannot be opened.
      await v.play().catch(() => undefined);
      const Native = (globalThis as { BarcodeDetector?: DetectorClass }).BarcodeDetector;
      let read: () => Promise<string | null>;
      if (Native) {
        setReader('the browser’s barcode reader');
        const detector = new Native({ formats: ['qr_code'] });
        read = async () => (await detector.detect(v))[0]?.rawValue ?? null;
      } else {
        setReader('the page’s QR reader');
        const { default: decodeQR } = await import('qr/decode.js');
        const canvas = document.createElement('canvas');
        const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
        read = async () => {
          if (!v.videoWidth) return null;
          canvas.width = v.videoWidth;
          canvas.height = v.videoHeight;
          ctx.drawImage(v, 0, 0);
          try {
            return decodeQR(ctx.getImageData(0, 0, canvas.width, canvas.height));
          } catch {
            return null; // no QR in this frame
          }
        };
      }
      let busy = false;
      timer = setInterval(() => {
        if (busy) return;
        busy = true;
        void read()
          .then((code) => {
            const now = Date.now();
            if (code && (code !== last.code || now - last.at > 3000)) onCodeRef.current(code);
            if (code) Object.assign(last, { code, at: now });
          })
          // Ignored on purpose: a frame the reader fails on is a frame without a code; the next one comes 250 ms later.
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, 250);
    })();
    return () => {
      stopped = true;
      if (timer) clearInterval(timer);
      stream?.getTracks().forEach((t) => t.stop());
    };
  }, []);

  return (
    <figure className="scanner-camera" data-testid="scanner-camera">
      <video ref={video} muted playsInline aria-label="Camera view: hold the fan's phone up to it" />
      <figcaption className="muted">{reader ? `Reading codes with ${reader}.` : 'Opening the camera…'}</figcaption>
    </figure>
  );
}
