"use client";
// Moving the browser session to another workspace: the server ends the old
// session and sets a new cookie; a full load of the inbox then starts every
// query and the live connection afresh in the new workspace, so nothing
// cached from the old one can show.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { markSessionBeingReplaced } from "../providers";

export function useSwitchWorkspace() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.auth.switchWorkspace.mutationOptions({
      onMutate: () => markSessionBeingReplaced(true),
      onError: () => {
        markSessionBeingReplaced(false);
        // A refusal of the session held back while the switch was under way is
        // asked again: if the old session did end (the answer was lost), the
        // operator goes to log in instead of waiting on a page that never loads.
        void queryClient.invalidateQueries({ queryKey: trpc.auth.me.queryKey() });
      },
      onSuccess: () => window.location.assign("/"),
    }),
  );
}
