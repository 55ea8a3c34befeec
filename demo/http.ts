// JSON over plain node:http between demo services: no client-side timeout,
// because an invocation may wait as long as a human takes to decide.
import { request } from "node:http";

export function postJson<T>(url: string, body: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => {
        if ((res.statusCode ?? 500) >= 400) return reject(new Error(`${url} answered ${res.statusCode}: ${text}`));
        try {
          resolve(JSON.parse(text) as T);
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}
