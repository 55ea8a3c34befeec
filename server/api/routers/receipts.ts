// Decision receipts for admins: rotating the key that signs them. The public
// keys themselves are served at GET /.well-known/jwks.json.
import { z } from "zod";
import { rotateReceiptKey } from "../../services/receipt-keys.ts";
import { adminProcedure, router } from "../trpc.ts";

export const receiptsRouter = router({
  rotateKey: adminProcedure
    .output(z.object({ kid: z.string(), retiredKids: z.array(z.string()), rotatedAt: z.string() }))
    .mutation(({ ctx }) => rotateReceiptKey(ctx.deps, ctx.operator)),
});
