-- AlterTable
ALTER TABLE "Request" ADD COLUMN     "traceparent" TEXT;
