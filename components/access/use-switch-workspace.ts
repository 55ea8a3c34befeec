"use client";
// Moving the browser session to another workspace: the server ends the old
// session and sets a new cookie; a full load of the inbox then starts every
// query and the live connection afresh in the new workspace, so nothing
// cached from the old one can show.
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc";
import { markSessionBeingReplaced } from "../providers";

export function useSwitchWorkspace() {
  const trpc = useTRPC();
  return useMutation(
    trpc.auth.switchWorkspace.mutationOptions({
      onMutate: () => markSessionBeingReplaced(true),
      onError: () => markSessionBeingReplaced(false),
      onSuccess: () => window.location.assign("/"),
    }),
  );
}
