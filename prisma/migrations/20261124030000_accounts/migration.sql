-- A person signs in once (Account) and may belong to several workspaces
-- (Operator, one membership each). Every existing operator becomes an account
-- of its own: emails were unique, so nothing merges.

-- CreateTable
CREATE TABLE "Account" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Account_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Account_email_key" ON "Account"("email");

INSERT INTO "Account" ("id", "email", "passwordHash", "createdAt")
SELECT 'acc_' || substr("id", 4), "email", "passwordHash", "createdAt" FROM "Operator";

-- AlterTable
ALTER TABLE "Operator" ADD COLUMN "accountId" TEXT;
UPDATE "Operator" SET "accountId" = 'acc_' || substr("id", 4);
ALTER TABLE "Operator" ALTER COLUMN "accountId" SET NOT NULL;
ALTER TABLE "Operator" DROP COLUMN "passwordHash";

-- DropIndex
DROP INDEX "Operator_email_key";
DROP INDEX "Operator_workspaceId_idx";

-- CreateIndex
CREATE INDEX "Operator_accountId_idx" ON "Operator"("accountId");
CREATE UNIQUE INDEX "Operator_workspaceId_accountId_key" ON "Operator"("workspaceId", "accountId");
CREATE UNIQUE INDEX "Operator_workspaceId_email_key" ON "Operator"("workspaceId", "email");

-- AddForeignKey
ALTER TABLE "Operator" ADD CONSTRAINT "Operator_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
