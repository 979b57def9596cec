; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @atomics_max_min(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, i32 %p3) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r0
  %v0 = mul i32 %tid, 7
  %v1 = sdiv i32 %v0, 13
  %v2 = srem i32 %v0, 13
  %v3 = icmp ne i32 %v2, 0
  %v4 = xor i32 %v2, 13
  %v5 = icmp slt i32 %v4, 0
  %v6 = and i1 %v3, %v5
  %v7 = select i1 %v6, i32 13, i32 0
  %v8 = add i32 %v2, %v7
  %v9 = sub i32 %v8, 6
  store i32 %v9, ptr addrspace(5) %r0
  %v10 = icmp slt i32 %tid, %p3
  br i1 %v10, label %do0, label %done1
do0:
  %v11 = load i32, ptr addrspace(5) %r0
  %v12 = sdiv i32 %tid, 4
  %v13 = srem i32 %tid, 4
  %v14 = icmp ne i32 %v13, 0
  %v15 = xor i32 %v13, 4
  %v16 = icmp slt i32 %v15, 0
  %v17 = and i1 %v14, %v16
  %v18 = select i1 %v17, i32 4, i32 0
  %v19 = add i32 %v13, %v18
  %v20 = sext i32 %v19 to i64
  %v21 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v20
  %v22 = atomicrmw max ptr addrspace(1) %v21, i32 %v11 syncscope("agent") monotonic, align 4
  br label %done1
done1:
  %v23 = load i32, ptr addrspace(5) %r0
  %v24 = sdiv i32 %tid, 4
  %v25 = srem i32 %tid, 4
  %v26 = icmp ne i32 %v25, 0
  %v27 = xor i32 %v25, 4
  %v28 = icmp slt i32 %v27, 0
  %v29 = and i1 %v26, %v28
  %v30 = select i1 %v29, i32 4, i32 0
  %v31 = add i32 %v25, %v30
  %v32 = sext i32 %v31 to i64
  %v33 = getelementptr inbounds i32, ptr addrspace(1) %p1, i64 %v32
  %v34 = atomicrmw umin ptr addrspace(1) %v33, i32 %v23 syncscope("agent") monotonic, align 4
  %v35 = load i32, ptr addrspace(5) %r0
  %v36 = sext i32 %v35 to i64
  %v37 = getelementptr inbounds i64, ptr addrspace(1) %p2, i64 0
  %v38 = atomicrmw min ptr addrspace(1) %v37, i64 %v36 syncscope("agent") monotonic, align 8
  %v39 = getelementptr inbounds i32, ptr addrspace(1) %p1, i64 1
  %v40 = atomicrmw umax ptr addrspace(1) %v39, i32 %tid syncscope("agent") monotonic, align 4
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
