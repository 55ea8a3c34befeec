import Link from "next/link";

export default function NotFound() {
  return (
    <main className="p-8">
      <h1 className="text-lg font-semibold">Not found</h1>
      <p className="mt-2 text-sm text-slate-600">
        Nothing exists at this address in your workspace. <Link href="/" className="underline">Back to the approval inbox</Link>.
      </p>
    </main>
  );
}
